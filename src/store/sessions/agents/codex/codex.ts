import type { SessionState } from '../../../../projections/index.js';
import { commonGuard, shq, type HarnessAdapter, type LaunchContext, type SignalCommand } from '../adapter.js';
import { codexThreadSaved } from './codex-threads.js';
import { CODEX_FIRST_RUN } from './codex-screens.js';
import { codexPreflight } from './preflight-codex.js';
import { confinedFiles, onAppServer, pendingApproval, protocolDir, protocolFiles, sendDecision } from './codex-app-server.js';
import { codexProtocolSignal, decisionNames, PROTOCOL_EVENTS } from './codex-protocol.js';

const field = (payload: unknown, name: string): string | undefined => {
  const v = typeof payload === 'object' && payload !== null ? (payload as Record<string, unknown>)[name] : undefined;
  return typeof v === 'string' ? v : undefined;
};

/**
 * The `notify` program handed to Codex with `-c notify=[...]` (a TOML array; JSON strings are valid TOML
 * basic strings). Codex runs it at the end of every turn with one argument, the event's JSON; the
 * wrapper passes that argument on stdin, as every adapter's signal takes its payload.
 */
function notifyConfig(ctx: LaunchContext): string {
  const script = `printf '%s' "$1" | ${ctx.trellis} session signal ${ctx.session.id} notify`;
  return `notify=${JSON.stringify(['sh', '-c', script, 'trellis-notify'])}`;
}

/** Today's path: the stock TUI with the `notify` program, read through its pane. */
function notifyCommand(ctx: LaunchContext): string {
  const config = `-c ${shq(notifyConfig(ctx))}`;
  const s = ctx.session;
  // The task and the agent's own id follow `--`: neither can be read as an option, whatever it starts with.
  if (ctx.resume) return s.agentSessionId ? `exec codex ${config} resume -- ${shq(s.agentSessionId)}` : `exec codex ${config} resume --last`;
  return s.task.trim() ? `exec codex ${config} -- ${shq(s.task)}` : `exec codex ${config}`;
}

/**
 * The one place that decides which way a launch's states come from: Codex's app-server (`protocol`,
 * confined or not; the watcher falls back to notify for an older Codex, a server that refuses, or a first
 * run that asks a login or folder access, which only Codex's own TUI asks), or its `notify` program.
 * TRELLIS_CODEX_CHANNEL=notify (in the environment Trellis runs in) chooses notify for every launch.
 */
export function codexChannel(): 'protocol' | 'notify' {
  return process.env.TRELLIS_CODEX_CHANNEL === 'notify' ? 'notify' : 'protocol';
}

/** The watcher started in the background (`relay`: the confined session's relay folder, where it meets the sandbox). */
function startWatcher(ctx: LaunchContext, relay?: string): string {
  const s = ctx.session;
  const dir = protocolDir(s.id);
  const f = protocolFiles(dir);
  const there = relay ? confinedFiles(relay) : f;
  const env = relay ? `TRELLIS_CODEX_RELAY=${shq(relay)} ` : '';
  return `mkdir -p -m 700 ${shq(dir)} && rm -f ${shq(there.ready)} ${shq(there.refused)} && { ${env}${ctx.trellis} session watch-codex ${shq(s.id)} ${ctx.resume ? 'resume' : 'fresh'} </dev/null >/dev/null 2>>${shq(`${dir}/watch.log`)} & }`;
}

/** The pane waits for the watcher's thread (30 s at most), else says it stopped waiting. */
const waitReady = (ready: string, refused: string, giveUp: string) =>
  `i=0; while [ ! -s ${ready} ] && [ ! -e ${refused} ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; [ -s ${ready} ] || ${giveUp}`;

/**
 * The app-server path (issue 41), unconfined: the watcher (`trellis session watch-codex`, in the background)
 * starts the session's own app-server and thread; the pane waits for the thread, then runs the stock TUI
 * attached to that server. When the watcher says the path is refused (an older Codex, a server that did
 * not come up), or never answers, the pane runs today's notify path instead.
 */
function appServerCommand(ctx: LaunchContext): string {
  const f = protocolFiles(protocolDir(ctx.session.id));
  const [ready, refused] = [shq(f.ready), shq(f.refused)];
  const remote = `if [ -s ${ready} ]; then exec codex --remote ${shq(`unix://${f.socket}`)} resume -- "$(cat ${ready})"; fi`;
  return `${startWatcher(ctx)}; ${waitReady(ready, refused, `echo 'the pane stopped waiting' >> ${refused}`)}; ${remote}; ${notifyCommand(ctx)}`;
}

/**
 * The app-server path confined (run inside the sandbox; its watcher runs outside, started by `outside`):
 * once the watcher says go (its version checked), the app-server listens in the sandbox's own /tmp and
 * the relay's bridge joins it to the watcher's socket in the relay folder — a socket Trellis listens on
 * in a folder the sandbox sees read-only, so Trellis never connects to a path the agent can write (a
 * planted symlink there could lead outside). The TUI attaches to the server inside.
 */
function confinedAppServerCommand(ctx: LaunchContext): string {
  const relay = `"$(dirname "$TRELLIS_SIGNAL_RELAY")"`;
  const at = (name: string) => `${relay}/${name}`;
  const [go, ready, refused, watcher] = [at('codex-go'), at('codex-ready'), at('codex-refused'), at('codex.sock')] as const;
  const sock = '/tmp/trellis-codex/app.sock';
  const server = `mkdir -p -m 700 /tmp/trellis-codex && codex app-server --listen unix://${sock} </dev/null >/dev/null 2>>/tmp/trellis-codex/log & srv=$!; ${ctx.trellis} bridge ${sock} ${watcher} & bridge=$!`;
  const start = `i=0; while [ ! -e ${go} ] && [ ! -e ${refused} ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; if [ -e ${go} ]; then ${server}; ${waitReady(ready, refused, 'kill $srv $bridge 2>/dev/null')}; fi`;
  const remote = `if [ -s ${ready} ]; then exec codex --remote unix://${sock} resume -- "$(cat ${ready})"; fi`;
  return `${start}; ${remote}; ${notifyCommand(ctx)}`;
}

/**
 * `codex` (Codex CLI). Over its own app-server as `codexChannel` decides (by default, confined or not): status, approvals by decision name, failures and usage from the protocol (source
 * `protocol`, codex-protocol.ts), the person's TUI attached to the same server in the pane. An older
 * Codex, or a server that refuses, takes the notify path: launched with the task, resumed with
 * `codex resume <id>`, whose only turn signal is the `notify` program: `agent-turn-complete` of the session's own conversation → awaiting{turn-end} (its
 * thread id recorded for resume). Codex 0.169's own hooks are not used: each needs a one-time review in
 * Codex ("Hooks need review") before it runs, a dialog of its own. Everything else is seen through the
 * pane (setup dialogs before the first signal) and process liveness.
 */
export const codexAdapter: HarnessAdapter = {
  name: 'codex',
  events: ['notify', ...PROTOCOL_EVENTS],
  ownedPaths: [],
  readsProse: true,
  // Not shown to queue typed input mid-turn: a prompt waits for the turn's end.
  queuesInput: false,
  versionArgs: ['codex', '--version'],
  program: { program: 'codex', install: 'npm install -g @openai/codex' },
  preflight: codexPreflight,
  firstRunScreens: CODEX_FIRST_RUN,
  command(ctx: LaunchContext) {
    if (codexChannel() === 'notify') return notifyCommand(ctx);
    return ctx.confined ? confinedAppServerCommand(ctx) : appServerCommand(ctx);
  },
  // Confined, the protocol's watcher runs outside the sandbox (it records for Trellis), before it.
  outside: (ctx: LaunchContext, relay: string) => (codexChannel() === 'protocol' ? startWatcher(ctx, relay) : null),
  install: async () => {},
  signal(event: string, payload: unknown, state: SessionState): readonly SignalCommand[] {
    if (event !== 'notify') return codexProtocolSignal(event, payload, state);
    if (field(payload, 'type') !== 'agent-turn-complete') return [];
    const thread = field(payload, 'thread-id');
    const turnEnd: SignalCommand = { type: 'await', reason: 'turn-end' };
    if (!thread || thread === state.agentSessionId) return [turnEnd];
    // One user turn notifies twice: first for Codex's title-generation side thread (its own thread id,
    // never saved), then for the conversation. Only the session's own conversation — the thread whose
    // input is the session's task, or one Codex saved — is recorded for `codex resume <id>` and ends a
    // turn; the side thread's notify, which can come while the real turn still runs, is ignored.
    const input = Array.isArray((payload as Record<string, unknown>)['input-messages']) ? ((payload as Record<string, unknown>)['input-messages'] as unknown[]) : [];
    const ownTask = state.task.trim() !== '' && input.some((m) => typeof m === 'string' && m.trim() === state.task.trim());
    return ownTask || codexThreadSaved(thread) ? [{ type: 'identify', agentSessionId: thread }, turnEnd] : [];
  },
  // On the app-server path an approval is answered by its decision's name through the protocol (no key typed).
  answer: (state: SessionState, choice: string) => sendDecision(state.id, choice),
  answersByApi: (state: SessionState) => onAppServer(state.id),
  answerOptions(state: SessionState) {
    const pending = state.status === 'awaiting' && state.reason === 'permission' ? pendingApproval(state.id) : null;
    return pending ? decisionNames(pending.params) : [];
  },
  guard: commonGuard,
};
