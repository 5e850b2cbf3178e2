import { join } from 'node:path';
import type { SessionState } from '../../../../projections/index.js';
import { installHooksSettings } from '../hooks-settings.js';
import { commonGuard, shq, signalCommand, type HarnessAdapter, type LaunchContext, type SignalCommand } from '../adapter.js';
import { sessionStartCommands } from '../signal.js';
import { CLAUDE_FIRST_RUN, CLAUDE_KEYED_DIALOGS, claudeDialogOnScreen, claudeIdleOnScreen, claudeInputBox } from './claude-screens.js';

/**
 * The Claude Code hook events this adapter subscribes to, each calling `trellis session signal <id> <event>`.
 * Checked against Claude Code 2.1.197's and 2.1.331's recorded payloads (test/agents/recordings/, replayed in replay.test.ts).
 */
const HOOKS = ['SessionStart', 'UserPromptSubmit', 'PermissionRequest', 'PostToolUse', 'PostToolUseFailure', 'Notification', 'Stop', 'StopFailure', 'SessionEnd'] as const;

/**
 * The hooks Claude Code can send as an HTTP POST of the same JSON (`type: "http"`, checked with 2.1.197 and
 * 2.1.331; SessionStart and SessionEnd are sent only to command hooks): with a serve online they go to its
 * loopback API, with none (or for the others) a `trellis session signal` process each.
 */
const HTTP_HOOKS: ReadonlySet<string> = new Set(['UserPromptSubmit', 'PermissionRequest', 'PostToolUse', 'PostToolUseFailure', 'Notification', 'Stop', 'StopFailure']);

/** The hooks' settings file: local to the worktree, never committed. */
export const CLAUDE_SETTINGS = '.claude/settings.local.json';

/** `StopFailure` errors that no retry fixes: the login or the billing is the problem (awaiting{auth}). */
const AUTH_ERRORS: Readonly<Record<string, string>> = {
  authentication_failed: 'log in: run /login in the session (trellis session keys), or give the agent a valid ANTHROPIC_API_KEY',
  billing_error: 'fix the billing of the account the agent uses, then prompt it again',
};

/**
 * `SessionEnd` reasons that mean the program is leaving (recorded: `prompt_input_exit` for /exit and
 * Ctrl-C, `other` when its terminal is killed). `clear` and `resume` (/clear, /resume) end one
 * conversation and start the next inside the same live program.
 */
const LEAVING = new Set(['prompt_input_exit', 'other']);

const field = (payload: unknown, name: string): string | undefined => {
  const v = typeof payload === 'object' && payload !== null ? (payload as Record<string, unknown>)[name] : undefined;
  return typeof v === 'string' ? v : undefined;
};

/**
 * `claude` (Claude Code): launched with the task as its prompt, `--resume <agent-session-id>` on resume.
 * Turn signals come from its hooks, written into the worktree's `.claude/settings.local.json`:
 * `UserPromptSubmit` → running; `PermissionRequest` → awaiting{permission}, or awaiting{question} for
 * its own `AskUserQuestion` tool; `PostToolUse(Failure)` → running again (a permission was answered);
 * `Stop` → awaiting{turn-end}, ending any wait; `StopFailure` → a failed turn with its error type, or
 * awaiting{auth} for a login or billing error; `Notification`: a permission prompt (unless it is the
 * question's), an elicitation dialog → awaiting{question}, the idle prompt → the turn is over if the
 * session still thought it ran (it never ends another wait); `SessionStart` records the agent's session
 * id, and after a resume or /clear the agent sits idle at its input; `SessionEnd` → interrupted only
 * when the program leaves.
 */
export const claudeAdapter: HarnessAdapter = {
  name: 'claude',
  events: HOOKS,
  ownedPaths: [CLAUDE_SETTINGS],
  readsProse: true,
  // Not shown to queue typed input mid-turn: a prompt waits for the turn's end.
  queuesInput: false,
  command(ctx: LaunchContext) {
    const s = ctx.session;
    // The agent's own id is glued to its option and the task follows `--`: neither can be read as an
    // option, whatever it starts with (a task of `--dangerously-skip-permissions` is a task).
    if (ctx.resume) return s.agentSessionId ? `exec claude --resume=${shq(s.agentSessionId)}` : 'exec claude --continue';
    return s.task.trim() ? `exec claude -- ${shq(s.task)}` : 'exec claude';
  },
  async install(worktree: string, ctx: LaunchContext) {
    await installHooksSettings(worktree, CLAUDE_SETTINGS, HOOKS, (event) =>
      ctx.apiUrl && HTTP_HOOKS.has(event)
        ? { type: 'http', url: `${ctx.apiUrl.replace(/\/$/, '')}/api/sessions/${ctx.session.id}/signal/${event}`, timeout: 30 }
        : { type: 'command', command: signalCommand(ctx, event) },
    );
  },
  signal(event: string, payload: unknown, state: SessionState): readonly SignalCommand[] {
    return claudeSignal(event, payload, state);
  },
  idleOnScreen: claudeIdleOnScreen,
  dialogOnScreen: claudeDialogOnScreen,
  inputBox: claudeInputBox,
  // End of line, then delete to its start (Claude Code's readline keys); repeated for a restored prompt of several lines.
  clearInputKeys: ['C-e', 'C-u', 'C-e', 'C-u', 'C-e', 'C-u'],
  versionArgs: ['claude', '--version'],
  program: { program: 'claude', install: 'npm install -g @anthropic-ai/claude-code' },
  // Loaded on a spawn only: an agent's hook (this adapter's signal) never reads Claude Code's config.
  preflight: async (ctx) => (await import('./preflight-claude.js')).claudePreflight(ctx),
  firstRunScreens: CLAUDE_FIRST_RUN,
  keyedDialogs: CLAUDE_KEYED_DIALOGS,
  guard: claudeGuard,
};

function claudeSignal(event: string, payload: unknown, state: SessionState): readonly SignalCommand[] {
  switch (event) {
    case 'SessionStart':
      return sessionStartCommands(payload, state);
    case 'UserPromptSubmit':
    case 'PostToolUse':
    case 'PostToolUseFailure':
      return [{ type: 'busy' }];
    case 'PermissionRequest':
      return [{ type: 'await', reason: field(payload, 'tool_name') === 'AskUserQuestion' ? 'question' : 'permission' }];
    case 'Stop':
      return [{ type: 'await', reason: 'turn-end' }];
    case 'StopFailure': {
      const error = field(payload, 'error') ?? 'unknown';
      const said = field(payload, 'last_assistant_message');
      const what = `${error}${said ? `: ${said}` : ''}`;
      const repair = AUTH_ERRORS[error];
      if (repair) return [{ type: 'await', reason: 'auth', detail: `${what} (${repair})` }];
      return [
        { type: 'turn-fail', reason: what },
        { type: 'await', reason: 'turn-end', detail: `the turn failed: ${what}` },
      ];
    }
    case 'Notification': {
      const kind = field(payload, 'notification_type') ?? '';
      const message = (field(payload, 'message') ?? '').toLowerCase();
      if (kind === 'permission_prompt' || (!kind && message.includes('permission'))) {
        // AskUserQuestion's dialog is announced as a permission prompt too: the question stays a question.
        return state.waiting === 'question' ? [] : [{ type: 'await', reason: 'permission' }];
      }
      if (kind === 'elicitation_dialog') return [{ type: 'await', reason: 'question' }];
      // 2.1.331's auto-mode dialog ("Auto mode can't check actions in this session"): no PermissionRequest
      // fires, only this notification. A person must choose: a wait, named by the agent's own message.
      if (kind === 'agent_needs_input') {
        if (state.waiting === 'permission' || state.waiting === 'question') return [];
        return [{ type: 'await', reason: 'permission', detail: `${field(payload, 'message') ?? 'Claude Code needs your choice'} (auto mode: "Enter to stay in auto mode" asks for each action; shift+Tab leaves it)` }];
      }
      if (kind === 'idle_prompt' || (!kind && message.includes('waiting for your input'))) return [{ type: 'idle' }];
      return [];
    }
    case 'SessionEnd':
      return LEAVING.has(field(payload, 'reason') ?? '') ? [{ type: 'interrupt', reason: 'process-exit' }] : [];
    default:
      return [];
  }
}

export { claudeIdleOnScreen };

function claudeGuard(state: SessionState, others: readonly SessionState[]): string | null {
  const shared = commonGuard(state, others);
  if (shared) return shared;
  // Two sessions resuming one Claude conversation share its transcript: cleaning one up would orphan the other.
  const twin = state.agentSessionId && others.find((o) => o.id !== state.id && o.agentSessionId === state.agentSessionId && !['closed', 'failed'].includes(o.status));
  return twin ? `session ${twin.id} continues the same Claude conversation ${state.agentSessionId}` : null;
}
