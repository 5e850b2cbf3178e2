import type { SessionState } from '../../../../projections/index.js';
import type { SignalCommand } from '../adapter.js';

/**
 * Codex's app-server protocol (JSON-RPC over a WebSocket on a unix socket), as the real 0.169.0 and
 * 0.171.0 sent it (test/agents/recordings/codex-<v>-app-server.jsonl), mapped to session transitions.
 * The watcher (codex-watch.ts) hands each notification or server request to `signalSession` by its
 * method, its params as the payload; `app-server/thread` and `app-server/stalled` are the watcher's own.
 */
export const PROTOCOL_EVENTS = [
  'app-server/thread',
  'app-server/stalled',
  'turn/started',
  'turn/completed',
  'item/commandExecution/requestApproval',
  'item/fileChange/requestApproval',
  'serverRequest/resolved',
  'thread/tokenUsage/updated',
] as const;

/** The server requests that wait on a person's decision, answered `{decision}` by name. */
export const APPROVAL_REQUESTS: ReadonlySet<string> = new Set(['item/commandExecution/requestApproval', 'item/fileChange/requestApproval']);

const obj = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * The decisions an approval offers, by name: each of its `availableDecisions` (a string, or an object
 * named by its one key: `acceptWithExecpolicyAmendment`), with `decline` after them — the protocol's
 * decision type has it and codex takes it though its list leaves it out (recorded: the command did not run).
 */
export function decisionNames(params: unknown): string[] {
  const offered = obj(params).availableDecisions;
  const names = (Array.isArray(offered) ? offered : ['accept', 'cancel']).map((d) => (typeof d === 'string' ? d : Object.keys(obj(d))[0])).filter((d): d is string => !!d);
  return names.includes('decline') ? names : [...names, 'decline'];
}

/** The decision sent for `name`: the offered value itself (an object decision carries its data), else the bare name. */
export function decisionValue(params: unknown, name: string): unknown {
  const offered = obj(params).availableDecisions;
  const found = (Array.isArray(offered) ? offered : []).find((d) => (typeof d === 'string' ? d === name : Object.keys(obj(d))[0] === name));
  return found ?? name;
}

/** What an approval asks, in words, with its options: the wait's detail. */
export function approvalDetail(method: string, params: unknown): string {
  const p = obj(params);
  const what = method === 'item/fileChange/requestApproval' ? 'change files' : `run ${str(p.command) ?? 'a command'}`;
  const reason = str(p.reason);
  return `${what}${reason ? ` (${reason})` : ''}; options: ${decisionNames(params).join(', ')}`;
}

/**
 * A failed turn's error named by its `codexErrorInfo`: `httpConnectionFailed 401`, `contextWindowExceeded`,
 * `usageLimitExceeded`, `other` …, then its message.
 */
export function codexErrorName(error: unknown): { readonly name: string; readonly status: number | null; readonly message: string } {
  const e = obj(error);
  const info = e.codexErrorInfo;
  const key = typeof info === 'string' ? info : (Object.keys(obj(info))[0] ?? 'unknown');
  const inner = obj(obj(info)[key]);
  const status = typeof inner.httpStatusCode === 'number' ? inner.httpStatusCode : null;
  return { name: status === null ? key : `${key} ${status}`, status, message: str(e.message) ?? 'no message' };
}

/** Failures no retry of the turn fixes: the login, the key or the plan is the problem (awaiting{auth}). */
const AUTH_ERRORS = new Set(['unauthorized', 'usageLimitExceeded']);

/**
 * One protocol message of the session's own thread as session commands: a turn started → running; a turn
 * completed → awaiting{turn-end} (interrupted: the same, saying so; failed: a failed turn naming its
 * codexErrorInfo, or awaiting{auth} for a refused key or a spent plan); an approval → awaiting{permission}
 * naming what it asks and its decisions; the approval resolved → running; the watcher's own: the thread
 * (identify; idle when nothing runs in it) and a turn that said nothing within its bound (awaiting{stalled}).
 */
export function codexProtocolSignal(event: string, payload: unknown, state: SessionState): readonly SignalCommand[] {
  const p = obj(payload);
  const thread = str(p.threadId);
  // Another thread of this app-server (a subagent's, a side thread) is not the session's conversation.
  if (thread && state.agentSessionId && thread !== state.agentSessionId && event !== 'app-server/thread') return [];
  switch (event) {
    case 'app-server/thread':
      return thread ? [{ type: 'identify', agentSessionId: thread }, ...(p.idle === true ? [{ type: 'idle' } as const] : [])] : [];
    case 'app-server/stalled':
      return [{ type: 'await', reason: 'stalled', detail: str(p.detail) ?? 'the turn said nothing within its bound' }];
    case 'turn/started':
      return [{ type: 'busy' }];
    case 'turn/completed': {
      const turn = obj(p.turn);
      if (turn.status === 'interrupted') return [{ type: 'await', reason: 'turn-end', detail: 'the turn was interrupted' }];
      if (turn.status !== 'failed') return [{ type: 'await', reason: 'turn-end' }];
      const { name, status, message } = codexErrorName(turn.error);
      const what = `${name}: ${message}`;
      if (status === 401 || status === 403 || AUTH_ERRORS.has(name)) {
        return [{ type: 'await', reason: 'auth', detail: `${what} (fix Codex's login or its provider's key, then prompt it again)` }];
      }
      return [{ type: 'turn-fail', reason: what }, { type: 'await', reason: 'turn-end', detail: `the turn failed: ${what}` }];
    }
    case 'item/commandExecution/requestApproval':
    case 'item/fileChange/requestApproval':
      return [{ type: 'await', reason: 'permission', detail: approvalDetail(event, payload) }];
    case 'serverRequest/resolved':
      return state.status === 'awaiting' && state.reason === 'permission' ? [{ type: 'busy' }] : [];
    default:
      // thread/tokenUsage/updated: nothing to transition; its signal reads the rollout's new usage.
      return [];
  }
}

/** The lowest Codex whose app-server and `--remote` TUI Trellis was checked against. */
export const APP_SERVER_MIN = [0, 169, 0] as const;

/** Whether `codex --version`'s output (`codex-cli 0.171.0`) names a Codex with the app-server path. */
export function appServerSupported(versionOutput: string): boolean {
  const m = /(\d+)\.(\d+)\.(\d+)/.exec(versionOutput);
  if (!m) return false;
  const v = [Number(m[1]), Number(m[2]), Number(m[3])];
  for (let i = 0; i < 3; i++) if (v[i] !== APP_SERVER_MIN[i]) return v[i]! > APP_SERVER_MIN[i]!;
  return true;
}
