import { TrellisError } from '../../../../events/index.js';
import type { SessionState } from '../../../../projections/index.js';
import { commonGuard, shq, type HarnessAdapter, type LaunchContext, type SignalCommand } from '../adapter.js';
import { endpointFile, freePort, opencodeCall, readEndpoint, writeEndpoint } from './opencode-server.js';

/**
 * The opencode events (its server's `GET /event`, checked against opencode 1.18.33's recording in
 * test/agents/recordings/) this adapter reads; the watcher hands each to `trellis session signal` as
 * its type with its `properties` as the payload.
 */
const EVENTS = ['session.created', 'session.status', 'session.idle', 'session.error', 'permission.asked', 'permission.replied', 'question.asked', 'question.replied'] as const;

/** Errors that no retry fixes: the login or the key is the problem (awaiting{auth}), not the turn. */
const AUTH_STATUSES = new Set([401, 403]);

/** Ports chosen by `install` for the launch that follows it (in the launching process). */
const chosenPorts = new Map<string, number>();

const obj = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The options of opencode's permission dialog, as its screen names them, and the reply each sends. */
const PERMISSION_OPTIONS: readonly { readonly label: string; readonly reply: 'once' | 'always' | 'reject'; readonly names: readonly string[] }[] = [
  { label: 'Allow once', reply: 'once', names: ['allow once', 'approve', 'allow', 'yes', 'once'] },
  { label: 'Allow always', reply: 'always', names: ['allow always', 'always'] },
  { label: 'Reject', reply: 'reject', names: ['reject', 'deny', 'no'] },
];

/**
 * `opencode` (the 1.x line): its TUI runs with its own HTTP server on a loopback port Trellis picks,
 * behind a password Trellis generates for each launch (`OPENCODE_SERVER_PASSWORD`). Its status comes
 * from opencode itself: a watcher (`trellis session watch-opencode`, started beside it in the pane, or
 * outside the sandbox when confined: the server is then reached through the sandbox's relay) reads the
 * server's event stream and records what it says: `session.created` (a root session) →
 * identify; `session.status` busy → running; `permission.asked` → awaiting{permission} (its patterns as
 * the detail), answered by name through opencode's own `POST /permission/:id/reply`; `question.asked` →
 * awaiting{question}; `session.error` → a failed turn, or awaiting{auth} for a refused key, never for an
 * abort; `session.idle` → awaiting{turn-end}. Launched with the task as `--prompt`, resumed with
 * `--session <id>`. A subagent's permission or question is a wait of the session too; its other events
 * are not. No plugin: the server says all of it.
 */
export const opencodeAdapter: HarnessAdapter = {
  name: 'opencode',
  events: EVENTS,
  ownedPaths: [],
  readsProse: true,
  // `opencode --version` prints the bare version (1.18.33); its server's `GET /global/health` says it too.
  versionArgs: ['opencode', '--version'],
  // No first-run check: its provider and model come from its own config, not read here.
  program: { program: 'opencode', install: 'npm install -g opencode-ai' },
  // opencode queues a prompt typed while it works ("QUEUED"), but only its TUI knows the queue: a prompt waits.
  queuesInput: false,
  command(ctx: LaunchContext) {
    const s = ctx.session;
    const port = chosenPorts.get(s.id);
    if (port === undefined) throw new TrellisError('SPAWN_FAILED', `no port was chosen for opencode in session ${s.id} (its adapter's install runs first)`);
    chosenPorts.delete(s.id);
    const file = writeEndpoint(s, port);
    // The password goes from the file into opencode's environment (hex: no quoting needed), never onto a command line.
    const password = `export OPENCODE_SERVER_PASSWORD="$(sed -n 's/.*"password":"\\([0-9a-f]*\\)".*/\\1/p' ${shq(file)})"`;
    // The watcher ignores the pane's hangup and ends once opencode's server is gone for good. A confined
    // opencode's runs outside its sandbox, started by the runtime (`watcher`): inside it could not write the log.
    const watch = ctx.confined ? 'true' : `{ ${watcher(ctx)} & }`;
    const args = ['--hostname', '127.0.0.1', '--port', String(port)];
    // The task and the id are glued to their options: a task that starts with `-` is never read as one.
    if (ctx.resume) args.push(s.agentSessionId ? `--session=${s.agentSessionId}` : '--continue');
    else if (s.task.trim()) args.push(`--prompt=${s.task}`);
    return `${password} && ${watch} && exec opencode ${args.map(shq).join(' ')}`;
  },
  watcher,
  // Confined: its endpoint file (the password opencode reads at launch, its own only) and its server's port,
  // which the watcher, the answering verb and the usage read reach through the sandbox's relay.
  sandbox(state: SessionState, env: NodeJS.ProcessEnv) {
    const endpoint = readEndpoint(state, env);
    return { reveal: [endpointFile(state, env)], expose: endpoint ? [endpoint.port] : [] };
  },
  async install(_worktree: string, ctx: LaunchContext) {
    // Also run at every serve's boot for live sessions: the port is used only by a launch that follows.
    chosenPorts.set(ctx.session.id, await freePort());
  },
  signal(event: string, payload: unknown, state: SessionState): readonly SignalCommand[] {
    return opencodeSignal(event, obj(payload), state);
  },
  async answer(state: SessionState, choice: string) {
    return answerPermission(state, choice);
  },
  answerOptions: (state: SessionState) => (state.status === 'awaiting' && state.reason === 'permission' ? PERMISSION_OPTIONS.map((o) => o.label) : []),
  guard: commonGuard,
};

/** The watcher of a launch (`trellis session watch-opencode`, its output nowhere), with the CLI the context names. */
function watcher(ctx: LaunchContext): string {
  return `${ctx.trellis} session watch-opencode ${shq(ctx.session.id)} ${ctx.resume ? 'resume' : 'fresh'} </dev/null >/dev/null 2>&1`;
}

function opencodeSignal(event: string, p: Record<string, unknown>, state: SessionState): readonly SignalCommand[] {
  if (event === 'session.created') {
    const info = obj(p.info);
    const id = str(info.id);
    // A subagent's session (the task tool) has a parent: it is part of the turn, not a conversation of its own.
    return id && !info.parentID ? [{ type: 'identify', agentSessionId: id }] : [];
  }
  // A permission or a question waits on a person whichever conversation asks it (this opencode serves
  // this session alone; a subagent's holds up the turn too). Turn states are the conversation's own only.
  const asks = event.startsWith('permission.') || event.startsWith('question.');
  const sid = str(p.sessionID);
  if (!asks && state.agentSessionId && sid && sid !== state.agentSessionId) return [];
  const identify: SignalCommand[] = sid && !state.agentSessionId && !asks ? [{ type: 'identify', agentSessionId: sid }] : [];
  switch (event) {
    case 'session.status':
      return obj(p.status).type === 'busy' ? [...identify, { type: 'busy' }] : identify;
    case 'permission.asked': {
      const patterns = Array.isArray(p.patterns) ? p.patterns.filter((x): x is string => typeof x === 'string') : [];
      const what = str(p.permission) ?? 'a tool';
      return [...identify, { type: 'await', reason: 'permission', detail: `${what}: ${patterns.join(' ') || '(no pattern)'}` }];
    }
    case 'question.asked':
      return [...identify, { type: 'await', reason: 'question' }];
    case 'permission.replied':
    case 'question.replied':
      return [...identify, { type: 'busy' }];
    case 'session.error': {
      const error = obj(p.error);
      const name = str(error.name) ?? 'error';
      // An abort (Esc, or the API's) is the person's doing, not a failed turn: the idle that follows ends it.
      if (name === 'MessageAbortedError') return identify;
      const data = obj(error.data);
      const what = `${name}${typeof data.statusCode === 'number' ? ` ${data.statusCode}` : ''}: ${str(data.message) ?? 'no message'}`;
      if (typeof data.statusCode === 'number' && AUTH_STATUSES.has(data.statusCode)) {
        return [...identify, { type: 'await', reason: 'auth', detail: `${what} (fix the provider's key in opencode's config or environment, then prompt it again)` }];
      }
      return [...identify, { type: 'turn-fail', reason: what }, { type: 'await', reason: 'turn-end', detail: `the turn failed: ${what}` }];
    }
    case 'session.idle':
      // After a failure or a login problem the wait already says why; an idle then changes nothing.
      if (state.status === 'awaiting' && (state.reason === 'auth' || (state.reason === 'turn-end' && state.detail))) return identify;
      return [...identify, { type: 'await', reason: 'turn-end' }];
    default:
      return [];
  }
}

/**
 * Answers opencode's pending permission of the session by name, through its own API (never a key):
 * `approve` / `Allow once`, `Allow always`, `deny` / `Reject`. Refused, naming the options, for a
 * choice that is none of them; refused when nothing waits.
 */
async function answerPermission(state: SessionState, choice: string): Promise<{ chose: string; options: readonly string[] }> {
  const options = PERMISSION_OPTIONS.map((o) => o.label);
  const want = PERMISSION_OPTIONS.find((o) => o.names.includes(choice.trim().toLowerCase()));
  if (!want) throw new TrellisError('INVALID_INPUT', `opencode's permission dialog offers ${options.map((o) => JSON.stringify(o)).join(', ')} (or approve, deny); '${choice}' names none of them`);
  const endpoint = readEndpoint(state);
  if (!endpoint) throw new TrellisError('SESSION_REFUSED', `session ${state.id}'s opencode server is unknown under this TRELLIS_HOME`);
  const pending = await opencodeCall(endpoint, 'GET', '/permission').catch((err: Error) => {
    throw new TrellisError('SESSION_REFUSED', `session ${state.id}'s opencode does not answer: ${err.message}`);
  });
  // This opencode serves this session alone: its own conversation's request first, else a subagent's.
  const requests = Array.isArray(pending) ? pending.map(obj) : [];
  const request = requests.find((r) => r.sessionID === state.agentSessionId) ?? requests[0];
  if (!request || typeof request.id !== 'string') throw new TrellisError('SESSION_REFUSED', `session ${state.id}'s opencode asks no permission now`);
  await opencodeCall(endpoint, 'POST', `/permission/${encodeURIComponent(request.id)}/reply`, { reply: want.reply });
  return { chose: want.label, options };
}
