import { isObject, parseStoredEvent, str, strs, type Check, type ParsedEvent } from './stored-json.js';
import { USAGE_DATA, type UsageData } from './usage-events.js';

/**
 * The events of one agent session, as stored in `event.json` of each commit on `refs/trellis/sessions/<id>`.
 *
 * Format versions (`v`):
 *   1 — initial format.
 * A reader refuses a version it does not know rather than guessing at it.
 */
export const SESSION_EVENT_FORMAT = 1 as const;

/** Who caused a transition, so a wrong status can be explained (DESIGN.md §9). */
/** `protocol`: the agent's own structured channel, read by a client of Trellis's (Codex's app-server, issue 41). */
export const SOURCES = ['user', 'hook', 'pane', 'process', 'supervisor', 'protocol'] as const;
export type Source = (typeof SOURCES)[number];

/**
 * What a waiting agent waits for: the end of its turn (it takes a prompt), a permission or question
 * dialog, a first-run dialog (`setup`: trust, API key, login, read from its pane before its first
 * signal), its provider's login or billing (`auth`, from the agent's own failure signal), or a dialog of
 * the agent's own mid-session that is neither a permission nor a question (`dialog`: Claude Code 2.1.331's
 * one-time "Make auto mode your default?"), or a person's decision to spend more (`budget`: the session's cost,
 * or the project's today, reached its budget in trellis.json; Trellis stopped the agent, issue 42), or a turn
 * that said nothing within its bound and never finalized (`stalled`: left as it is, never retried, issue 41).
 */
export const AWAIT_REASONS = ['turn-end', 'permission', 'question', 'setup', 'auth', 'dialog', 'budget', 'stalled'] as const;
export type AwaitReason = (typeof AWAIT_REASONS)[number];

export const INTERRUPT_REASONS = ['by-user', 'process-exit', 'tmux-gone'] as const;
export type InterruptReason = (typeof INTERRUPT_REASONS)[number];

export interface SessionEventMeta {
  readonly v: typeof SESSION_EVENT_FORMAT;
  /** ISO-8601 instant with milliseconds. */
  readonly at: string;
  /** Author: a user name, `human`, a session id, or `trellis` for the supervisors. */
  readonly by: string;
  /** Lamport clock of the stream: the previous event's clock + 1, starting at 1. */
  readonly clock: number;
  readonly source: Source;
}

export interface SpawnedData {
  readonly harness: string;
  /** The task prompt, whole. */
  readonly task: string;
  readonly nodes: readonly string[];
  /** The issue the session works on, if any. */
  readonly issue: string | null;
  /** The trunk commit the branch forks from. */
  readonly base: string;
  readonly branch: string;
  readonly worktree: string;
}

/** One check's definition: the scenario, the node declaring it, its command and its timeout; `run: null` when the branch removed it. */
export interface CheckDefinition {
  readonly id: string;
  readonly node: string | null;
  readonly run: string | null;
  readonly timeoutS: number | null;
}

/** The checks fixed at dispatch: every scenario the base commit declares, and the issue's `checks:` as at spawn. */
export interface FixedChecks {
  readonly base: string;
  readonly scenarios: readonly CheckDefinition[];
  readonly issueChecks: readonly string[];
}

export type SessionEvent =
  | (SessionEventMeta & { readonly type: 'spawned'; readonly data: SpawnedData })
  | (SessionEventMeta & { readonly type: 'starting'; readonly data: Record<string, never> })
  /**
   * `awaitsSignal`: the agent signals its own start (a hook), so the session stays `starting` until it does.
   * `agentVersion`: what the agent program said its version was (`claude --version`), when it says one.
   * `confined`: what confines the agent (issue 45), or `unconfined`: why nothing does; neither on a launch logged before the rule.
   */
  | (SessionEventMeta & { readonly type: 'launched'; readonly data: { readonly tmuxSession: string; readonly pane: string; readonly awaitsSignal?: boolean; readonly agentVersion?: string } & Confined })
  | (SessionEventMeta & { readonly type: 'identified'; readonly data: { readonly agentSessionId: string } })
  /** `held`: why the prompt waits on the timeline instead of reaching the pane (absent: delivered at once). */
  | (SessionEventMeta & { readonly type: 'prompted'; readonly data: { readonly body: string; readonly held?: string } })
  /** A held prompt (timeline entry `index`) typed into the pane once the agent took input. */
  | (SessionEventMeta & { readonly type: 'delivered'; readonly data: { readonly index: number } })
  /** Prompt `index` did not reach the pane (or cannot yet): held on the timeline, `reason` saying why, and delivered when the agent's input box is empty. */
  | (SessionEventMeta & { readonly type: 'undelivered'; readonly data: { readonly index: number; readonly reason: string } })
  /** `detail`: what the wait is about in words (the setup dialog on screen, the login problem, a failed turn's error). */
  /** `idle`: read from an idle notice or screen, not a turn's own end (it never clears the failure streak). */
  | (SessionEventMeta & { readonly type: 'awaiting'; readonly data: { readonly reason: AwaitReason; readonly detail?: string; readonly idle?: boolean } })
  | (SessionEventMeta & { readonly type: 'running'; readonly data: Record<string, never> })
  /** `detail`: for a process exit, the last lines of its screen (and the evidence hash of the whole screen). */
  | (SessionEventMeta & { readonly type: 'interrupted'; readonly data: { readonly reason: InterruptReason; readonly detail?: string } })
  | (SessionEventMeta & { readonly type: 'resumed'; readonly data: Record<string, never> })
  | (SessionEventMeta & { readonly type: 'review-requested'; readonly data: Record<string, never> })
  | (SessionEventMeta & { readonly type: 'merge-dispatched'; readonly data: Record<string, never> })
  /** The merge gate (DESIGN.md §14) overridden: why, and the scenarios that blocked it. */
  | (SessionEventMeta & { readonly type: 'merge-overridden'; readonly data: { readonly reason: string; readonly scenarios: readonly string[] } })
  | (SessionEventMeta & { readonly type: 'closed'; readonly data: { readonly wip: string | null } })
  | (SessionEventMeta & { readonly type: 'quarantined'; readonly data: { readonly reason: string; readonly wip: string | null } })
  | (SessionEventMeta & { readonly type: 'failed'; readonly data: { readonly reason: string } })
  | (SessionEventMeta & { readonly type: 'turn-failed'; readonly data: { readonly reason: string } })
  | (SessionEventMeta & { readonly type: 'viewed'; readonly data: Record<string, never> })
  /** The session's checks as fixed at dispatch (DESIGN.md §14): the base commit's declarations and the issue's `checks:` at spawn. */
  | (SessionEventMeta & { readonly type: 'checks-fixed'; readonly data: FixedChecks })
  /** A person accepted a check's new definition (a branch changed or removed it): who (`by`), why, and the definitions accepted. */
  | (SessionEventMeta & { readonly type: 'check-accepted'; readonly data: { readonly reason: string; readonly scenarios: readonly CheckDefinition[] } })
  /** What a read of the agent's own usage record found (issue 42): tokens per response, turns, context in use. */
  | (SessionEventMeta & { readonly type: 'usage'; readonly data: UsageData })
  /**
   * A person answered the agent's dialog and it took (issue 43): the option by name and the channel it came
   * through (`the page`, `the CLI`, `a notification`, `ntfy`, `a webhook link`); who is the event's `by`,
   * stamped at the door, and when its `at`. A later tap on a notification of that wait reads it.
   */
  | (SessionEventMeta & { readonly type: 'answered'; readonly data: { readonly option: string; readonly via: string } });

export type SessionEventType = SessionEvent['type'];

/** A launch's confinement as logged: what confines the agent, or why nothing does. */
export type Confined = { readonly confined?: string; readonly unconfined?: string };

/**
 * Parses one stored session event. Returns the event, or a one-line reason it is not one. Hand-written
 * for the same start-up reason as `parseThreadEvent`.
 */
export function parseSessionEvent(text: string): ParsedEvent<SessionEvent> {
  return parseStoredEvent<SessionEvent>(text, eventProblem);
}

const text: Check = (v) => typeof v === 'string' && v !== '';
const strOrNull: Check = (v) => v === null || str(v);
const optional =
  (check: Check): Check =>
  (v) => v === undefined || check(v);
const index: Check = (v) => Number.isInteger(v) && (v as number) >= 0;
const oneOf =
  (values: readonly string[]): Check =>
  (v) => typeof v === 'string' && values.includes(v);

const DATA: Record<SessionEventType, Record<string, Check>> = {
  spawned: { harness: text, task: str, nodes: strs, issue: strOrNull, base: text, branch: text, worktree: text },
  starting: {},
  launched: { tmuxSession: text, pane: text, awaitsSignal: optional((v) => typeof v === 'boolean'), agentVersion: optional(text), confined: optional(text), unconfined: optional(text) },
  identified: { agentSessionId: text },
  prompted: { body: str, held: optional(str) },
  delivered: { index },
  undelivered: { index, reason: text },
  awaiting: { reason: oneOf(AWAIT_REASONS), detail: optional(str), idle: optional((v) => typeof v === 'boolean') },
  running: {},
  interrupted: { reason: oneOf(INTERRUPT_REASONS), detail: optional(str) },
  resumed: {},
  'review-requested': {},
  'merge-dispatched': {},
  'merge-overridden': { reason: text, scenarios: strs },
  closed: { wip: strOrNull },
  quarantined: { reason: str, wip: strOrNull },
  failed: { reason: str },
  'turn-failed': { reason: str },
  viewed: {},
  'checks-fixed': { base: text, scenarios: (v) => Array.isArray(v) && v.every(isDefinition), issueChecks: strs },
  'check-accepted': { reason: text, scenarios: (v) => Array.isArray(v) && v.length > 0 && v.every(isDefinition) },
  usage: USAGE_DATA,
  answered: { option: text, via: text },
};

function isDefinition(v: unknown): boolean {
  if (!isObject(v)) return false;
  const nullOr = (x: unknown, t: 'string' | 'number') => x === null || typeof x === t;
  return text(v.id) && nullOr(v.node, 'string') && nullOr(v.run, 'string') && nullOr(v.timeoutS, 'number');
}

function eventProblem(raw: unknown): string | null {
  if (!isObject(raw)) return 'is not a JSON object';
  if (raw.v !== SESSION_EVENT_FORMAT) {
    return `has format ${JSON.stringify(raw.v)}, this trellis knows v${SESSION_EVENT_FORMAT}${typeof raw.v === 'number' && raw.v > SESSION_EVENT_FORMAT ? '; upgrade trellis' : ''}`;
  }
  if (typeof raw.type !== 'string' || !Object.hasOwn(DATA, raw.type)) return `has unknown type ${JSON.stringify(raw.type)}`;
  if (!str(raw.at) || Number.isNaN(Date.parse(raw.at as string))) return 'has no valid "at" timestamp';
  if (!str(raw.by)) return 'has no "by" author';
  if (!Number.isInteger(raw.clock) || (raw.clock as number) < 1) return 'has no valid "clock"';
  if (!oneOf(SOURCES)(raw.source)) return `has no valid "source" (one of ${SOURCES.join(', ')})`;
  if (!isObject(raw.data)) return 'has no "data" object';
  for (const [field, ok] of Object.entries(DATA[raw.type as SessionEventType])) {
    if (!ok(raw.data[field])) return `has a ${raw.type} event whose data.${field} is missing or of the wrong type`;
  }
  return null;
}

/** The commit subject of a session event, so `git log refs/trellis/sessions/<id>` reads as the audit. */
export function describeSessionEvent(event: SessionEvent): string {
  const words = (s: string) => {
    const line = s.split('\n', 1)[0]!.trim();
    return line.length > 60 ? `${line.slice(0, 57)}...` : line;
  };
  const from = `(${event.source})`;
  switch (event.type) {
    case 'spawned':
      return `spawn ${event.data.harness}: ${words(event.data.task) || '(no task)'}`;
    case 'starting':
      return `start ${from}`;
    case 'launched':
      return `launch: tmux ${event.data.tmuxSession} pane ${event.data.pane}${event.data.agentVersion ? ` (agent ${words(event.data.agentVersion)})` : ''}${event.data.unconfined ? ' unconfined' : ''}`;
    case 'identified':
      return `identify: agent session ${event.data.agentSessionId}`;
    case 'prompted':
      return `prompt${event.data.held ? ' (held)' : ''}: ${words(event.data.body) || '(empty)'}`;
    case 'delivered':
      return `deliver prompt ${event.data.index + 1} ${from}`;
    case 'undelivered':
      return `hold prompt ${event.data.index + 1}: ${words(event.data.reason)} ${from}`;
    case 'awaiting':
      return `await ${event.data.reason}${event.data.detail ? `: ${words(event.data.detail)}` : ''} ${from}`;
    case 'running':
      return `run ${from}`;
    case 'interrupted':
      return `interrupt ${event.data.reason} ${from}`;
    case 'resumed':
      return `resume ${from}`;
    case 'review-requested':
      return 'review requested';
    case 'merge-dispatched':
      return 'merge dispatched';
    case 'merge-overridden':
      // Whole: the reason and every scenario are the audit, never shortened.
      return `merge gate overridden by ${event.by} for ${event.data.scenarios.join(', ')}: ${event.data.reason.replace(/\s+/g, ' ').trim()}`;
    case 'closed':
      return `close${event.data.wip ? `: wip saved at ${event.data.wip.slice(0, 12)}` : ''}`;
    case 'quarantined':
      return `quarantine: ${words(event.data.reason)}${event.data.wip ? ` (wip saved at ${event.data.wip.slice(0, 12)})` : ''}`;
    case 'failed':
      return `fail: ${words(event.data.reason)}`;
    case 'turn-failed':
      return `turn failed: ${words(event.data.reason)} ${from}`;
    case 'viewed':
      return 'viewed';
    case 'checks-fixed':
      return `checks fixed at ${event.data.base.slice(0, 12)}: ${event.data.scenarios.length} declared scenario(s)${event.data.issueChecks.length ? `, issue checks ${event.data.issueChecks.join(', ')}` : ''}`;
    case 'check-accepted':
      // Whole, like an override: the audit names who accepted which definitions and why.
      return `changed check accepted by ${event.by} for ${event.data.scenarios.map((d) => `${d.id} (${d.run === null ? 'removed' : `run: ${d.run}`})`).join(', ')}: ${event.data.reason.replace(/\s+/g, ' ').trim()}`;
    case 'answered':
      return `answered "${words(event.data.option)}" from ${event.data.via} by ${event.by}`;
    case 'usage': {
      const tokens = event.data.entries.reduce((n, e) => n + e.input + e.output + e.cacheRead + e.cacheWrite, 0);
      return `usage: ${event.data.entries.length} response(s), ${tokens} tokens${event.data.turns ? `, ${event.data.turns} turn(s)` : ''} (${event.data.agent})`;
    }
  }
}
