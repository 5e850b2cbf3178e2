import { isScenarioId, scenarioKey, TrellisError, type Reading } from '../../events/index.js';
import type { Project } from '../project/project.js';

/** A reading by id, from its scenario's stream; READING_NOT_FOUND when that stream has no such reading. */
export async function findReading(p: Project, scenario: string, reading: string): Promise<Reading> {
  if (!isScenarioId(scenario)) throw new TrellisError('SCENARIO_NOT_FOUND', `'${scenario}' is not a scenario id`);
  const state = await p.evals.get(scenarioKey(scenario));
  const found = state.readings.find((r) => r.id === reading);
  if (!found) throw new TrellisError('READING_NOT_FOUND', `no reading '${reading}' of scenario '${scenario}'; 'trellis eval show ${scenario} --json' lists its readings`);
  return found;
}
