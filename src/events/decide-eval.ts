import { TrellisError } from './errors.js';
import { EVAL_EVENT_FORMAT, isOutcome, isScenarioId, OUTCOMES, type EvalEvent, type Reading } from './eval-events.js';
import type { CommandMeta } from './thread-commands.js';

/** File one reading; `by` and `at` are the reading's own. */
export type EvalCommand = CommandMeta & { readonly type: 'measure'; readonly reading: Omit<Reading, 'by' | 'at'> };

/** What `decide` needs to know about a scenario's readings; the readings fold satisfies it structurally. */
export interface EvalFacts {
  readonly scenario: string;
  readonly clock: number;
  readonly readings: readonly { readonly id: string }[];
}

const HASH = /^[0-9a-f]{64}$/;

/**
 * Decides a reading against the scenario's stream: the `measured` event, or a TrellisError with a stable
 * code (an outcome outside pass|fail|error, a score that is not a number, a reading id already filed).
 * Pure: the caller hands in `by`, `at` and the reading id, and re-decides after a lost compare-and-swap.
 */
export function decideEval(state: EvalFacts, command: EvalCommand): EvalEvent[] {
  const r = command.reading;
  if (!isScenarioId(r.scenario)) throw new TrellisError('INVALID_INPUT', `'${r.scenario}' is not a scenario id (segments of letters, digits, _ - and ., joined by /)`);
  if (r.scenario !== state.scenario) throw new TrellisError('INVALID_INPUT', `a reading of ${r.scenario} cannot be filed on the stream of ${state.scenario}`);
  if (!isOutcome(r.outcome)) throw new TrellisError('INVALID_INPUT', `outcome must be one of ${OUTCOMES.join(', ')}, not ${JSON.stringify(r.outcome)}`);
  if (r.score !== undefined && (typeof r.score !== 'number' || !Number.isFinite(r.score))) {
    throw new TrellisError('INVALID_INPUT', `score must be a finite number, not ${JSON.stringify(r.score)}`);
  }
  if (typeof r.durationMs !== 'number' || !Number.isFinite(r.durationMs) || r.durationMs < 0) {
    throw new TrellisError('INVALID_INPUT', `durationMs must be a number of milliseconds from 0, not ${JSON.stringify(r.durationMs)}`);
  }
  if (typeof r.scope !== 'string' || r.scope.trim() === '') throw new TrellisError('INVALID_INPUT', 'a reading needs a scope');
  if (r.output !== null && !HASH.test(r.output)) throw new TrellisError('INVALID_INPUT', `'${r.output}' is not an evidence hash (64 lowercase hex digits of sha256)`);
  if (r.commit !== null && !/^[0-9a-f]{40,64}$/.test(r.commit)) throw new TrellisError('INVALID_INPUT', `'${r.commit}' is not a commit id`);
  if (r.run !== undefined && typeof r.run !== 'string') throw new TrellisError('INVALID_INPUT', 'a reading\'s run must be the command text');
  if (typeof r.id !== 'string' || r.id === '') throw new TrellisError('INVALID_INPUT', 'a reading needs an id');
  if (state.readings.some((x) => x.id === r.id)) throw new TrellisError('READING_EXISTS', `reading ${r.id} of ${r.scenario} is already filed`);
  const data: Omit<Reading, 'by' | 'at'> = {
    id: r.id,
    scenario: r.scenario,
    scope: r.scope,
    commit: r.commit,
    outcome: r.outcome,
    ...(r.score !== undefined ? { score: r.score } : {}),
    durationMs: r.durationMs,
    output: r.output,
    ...(r.run !== undefined ? { run: r.run } : {}),
  };
  return [{ v: EVAL_EVENT_FORMAT, type: 'measured', at: command.at, by: command.by, clock: state.clock + 1, data }];
}
