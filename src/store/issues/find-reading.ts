import { isScenarioId, scenarioKey, TrellisError, type Reading } from '../../events/index.js';

/**
 * What an issue verb reads of the eval streams: a scenario's readings, by its stream key. The eval room's
 * `EvalStore` is one; the issues room declares the need rather than importing the room above it.
 */
export interface ReadingStreams {
  get(key: string): Promise<{ readonly readings: readonly Reading[] }>;
}

/** A reading by id, from its scenario's stream; READING_NOT_FOUND when that stream has no such reading. */
export async function findReading(p: { readonly evals: ReadingStreams }, scenario: string, reading: string): Promise<Reading> {
  if (!isScenarioId(scenario)) throw new TrellisError('SCENARIO_NOT_FOUND', `'${scenario}' is not a scenario id`);
  const state = await p.evals.get(scenarioKey(scenario));
  const found = state.readings.find((r) => r.id === reading);
  if (!found) throw new TrellisError('READING_NOT_FOUND', `no reading '${reading}' of scenario '${scenario}'; 'trellis eval show ${scenario} --json' lists its readings`);
  return found;
}
