import type { SessionState } from '../../../projections/index.js';
import { commonGuard, shq, type HarnessAdapter, type LaunchContext, type SignalCommand } from './adapter.js';
import { codexThreadSaved } from './codex-threads.js';
import { CODEX_FIRST_RUN } from './codex-screens.js';
import { codexPreflight } from '../preflight-codex.js';

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

/**
 * `codex` (Codex CLI): launched with the task, resumed with `codex resume <id>`. Its only turn signal is
 * the `notify` program: `agent-turn-complete` of the session's own conversation → awaiting{turn-end}
 * (its thread id recorded for resume). Codex 0.169's own hooks are not used: each needs a one-time
 * review in Codex ("Hooks need review") before it runs, a dialog of its own. Everything else is seen
 * through the pane (setup dialogs before the first signal) and process liveness.
 */
export const codexAdapter: HarnessAdapter = {
  name: 'codex',
  events: ['notify'],
  ownedPaths: [],
  readsProse: true,
  // Not shown to queue typed input mid-turn: a prompt waits for the turn's end.
  queuesInput: false,
  versionArgs: ['codex', '--version'],
  program: { program: 'codex', install: 'npm install -g @openai/codex' },
  preflight: codexPreflight,
  firstRunScreens: CODEX_FIRST_RUN,
  command(ctx: LaunchContext) {
    const config = `-c ${shq(notifyConfig(ctx))}`;
    const s = ctx.session;
    // The task and the agent's own id follow `--`: neither can be read as an option, whatever it starts with.
    if (ctx.resume) return s.agentSessionId ? `exec codex ${config} resume -- ${shq(s.agentSessionId)}` : `exec codex ${config} resume --last`;
    return s.task.trim() ? `exec codex ${config} -- ${shq(s.task)}` : `exec codex ${config}`;
  },
  install: async () => {},
  signal(_event: string, payload: unknown, state: SessionState): readonly SignalCommand[] {
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
  guard: commonGuard,
};
