import { isObject, parseStoredEvent, str, type ParsedEvent } from './stored-json.js';

/**
 * The events of one scenario's readings, as stored in `event.json` of each commit on
 * `refs/trellis/evals/<scenario-key>` (DESIGN.md §12).
 *
 * Format versions (`v`):
 *   1 — initial format: `measured`.
 * A reader refuses a version it does not know rather than guessing at it.
 */
export const EVAL_EVENT_FORMAT = 1 as const;

/** What one run of a scenario came to: its command exited 0, exited otherwise, or could not finish. */
export type Outcome = 'pass' | 'fail' | 'error';
export const OUTCOMES: readonly Outcome[] = ['pass', 'fail', 'error'];
export const isOutcome = (v: unknown): v is Outcome => v === 'pass' || v === 'fail' || v === 'error';

/** One measurement of one scenario in one scope at one commit. */
export interface Reading {
  /** Stable and unique: what an eval remark's `reading` names. */
  readonly id: string;
  readonly scenario: string;
  /** `trunk`, a session id, or a linked worktree's branch name. */
  readonly scope: string;
  /** The commit measured (the scope's HEAD), when there was one. */
  readonly commit: string | null;
  readonly outcome: Outcome;
  readonly score?: number;
  readonly durationMs: number;
  /** Evidence hash of the command's output, when it was kept. */
  readonly output: string | null;
  /** Who filed it: a session id, a git user name, or `human`. */
  readonly by: string;
  readonly at: string;
  /** The command that ran (a run by Trellis); absent for a reading filed from outside. The gate counts only a run of the definition fixed at dispatch. */
  readonly run?: string;
}

export type EvalEvent = {
  readonly v: typeof EVAL_EVENT_FORMAT;
  readonly type: 'measured';
  readonly at: string;
  readonly by: string;
  readonly clock: number;
  readonly data: Omit<Reading, 'by' | 'at'>;
};

// A scenario id is a path of segments like a node id, but stricter so its ref key is always a valid
// git ref component: no `..`, no trailing `.`, no `.lock` ending, and never the separator `+`.
const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*$/;

/** Whether `s` is a valid scenario id, e.g. `checkout/happy-path`. */
export const isScenarioId = (s: string): boolean =>
  s.length > 0 && s.length <= 200 && s.split('/').every((seg) => SEGMENT.test(seg) && !seg.endsWith('.lock'));

/** The ref-safe key of a scenario (one ref path component): `checkout/happy-path` → `checkout+happy-path`. */
export const scenarioKey = (scenario: string): string => scenario.split('/').join('+');

/** The scenario a ref key names: `checkout+happy-path` → `checkout/happy-path`. */
export const scenarioOfKey = (key: string): string => key.split('+').join('/');

/**
 * Parses one stored event. Returns the event, or a one-line reason it is not one. Hand-written for the
 * same reason as parseThreadEvent: importing arktype costs ~180 ms of CLI start-up.
 */
export function parseEvalEvent(text: string): ParsedEvent<EvalEvent> {
  return parseStoredEvent<EvalEvent>(text, eventProblem);
}

const HASH = /^[0-9a-f]{64}$/;

const DATA: Record<string, (v: unknown) => boolean> = {
  id: (v) => str(v) && v.length > 0,
  scenario: (v) => str(v) && isScenarioId(v),
  scope: (v) => str(v) && v.length > 0,
  commit: (v) => v === null || (str(v) && /^[0-9a-f]{40,64}$/.test(v)),
  outcome: isOutcome,
  score: (v) => v === undefined || (typeof v === 'number' && Number.isFinite(v)),
  durationMs: (v) => typeof v === 'number' && Number.isFinite(v) && v >= 0,
  output: (v) => v === null || (str(v) && HASH.test(v)),
  run: (v) => v === undefined || str(v),
};

function eventProblem(raw: unknown): string | null {
  if (!isObject(raw)) return 'is not a JSON object';
  if (raw.v !== EVAL_EVENT_FORMAT) {
    return `has format ${JSON.stringify(raw.v)}, this trellis knows v${EVAL_EVENT_FORMAT}${typeof raw.v === 'number' && raw.v > EVAL_EVENT_FORMAT ? '; upgrade trellis' : ''}`;
  }
  if (raw.type !== 'measured') return `has unknown type ${JSON.stringify(raw.type)}`;
  if (!str(raw.at) || Number.isNaN(Date.parse(raw.at))) return 'has no valid "at" timestamp';
  if (!str(raw.by) || raw.by === '') return 'has no "by" author';
  if (!Number.isInteger(raw.clock) || (raw.clock as number) < 1) return 'has no valid "clock"';
  if (!isObject(raw.data)) return 'has no "data" object';
  for (const [field, ok] of Object.entries(DATA)) {
    if (!ok(raw.data[field])) return `has a measured event whose data.${field} is missing or of the wrong type`;
  }
  return null;
}

/** The commit subject: `measured pass in trunk (1234 ms)`, so `git log` of the eval ref reads as an audit. */
export function describeEvalEvent(event: EvalEvent): string {
  const d = event.data;
  return `measured ${d.outcome}${d.score !== undefined ? ` (score ${d.score})` : ''} in ${d.scope} at ${d.commit ? d.commit.slice(0, 12) : 'no commit'} in ${Math.round(d.durationMs)} ms: reading ${d.id}`;
}
