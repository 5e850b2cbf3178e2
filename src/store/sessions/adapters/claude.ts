import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SessionState } from '../../../projections/index.js';
import { commonGuard, shq, type HarnessAdapter, type LaunchContext, type SignalCommand } from './adapter.js';

/** The Claude Code hook events this adapter subscribes to, each calling `trellis session signal <id> <event>`. */
const HOOKS = ['SessionStart', 'UserPromptSubmit', 'Stop', 'Notification', 'SessionEnd'] as const;

/** The hooks' settings file: local to the worktree, never committed. */
export const CLAUDE_SETTINGS = '.claude/settings.local.json';

const field = (payload: unknown, name: string): string | undefined => {
  const v = typeof payload === 'object' && payload !== null ? (payload as Record<string, unknown>)[name] : undefined;
  return typeof v === 'string' ? v : undefined;
};

/**
 * `claude` (Claude Code): launched with the task as its prompt, `--resume <agent-session-id>` on resume.
 * Turn signals come from its hooks, written into the worktree's `.claude/settings.local.json`: `Stop` →
 * awaiting{turn-end}; `Notification` → awaiting{permission} (permission prompt), awaiting{question}
 * (elicitation dialog), or, for the idle prompt that only repeats a Stop, awaiting{turn-end} (which
 * changes nothing when already awaiting); `UserPromptSubmit` → running; `SessionStart` records the
 * agent's session id; `SessionEnd` (other than `/clear`) → interrupted{process-exit}.
 */
export const claudeAdapter: HarnessAdapter = {
  name: 'claude',
  events: HOOKS,
  ownedPaths: [CLAUDE_SETTINGS],
  command(ctx: LaunchContext) {
    const s = ctx.session;
    if (ctx.resume) return s.agentSessionId ? `exec claude --resume ${shq(s.agentSessionId)}` : 'exec claude --continue';
    return s.task.trim() ? `exec claude ${shq(s.task)}` : 'exec claude';
  },
  async install(worktree: string, ctx: LaunchContext) {
    const path = join(worktree, CLAUDE_SETTINGS);
    let settings: Record<string, unknown> = {};
    try {
      const raw = JSON.parse(await readFile(path, 'utf8')) as unknown;
      if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) settings = raw as Record<string, unknown>;
    } catch {
      // Absent or unreadable: ours is the whole file.
    }
    const hooks = typeof settings.hooks === 'object' && settings.hooks !== null ? { ...(settings.hooks as Record<string, unknown>) } : {};
    for (const event of HOOKS) {
      hooks[event] = [{ hooks: [{ type: 'command', command: `${ctx.trellis} session signal ${ctx.session.id} ${event}` }] }];
    }
    await mkdir(join(worktree, '.claude'), { recursive: true });
    await writeFile(path, `${JSON.stringify({ ...settings, hooks }, null, 2)}\n`);
  },
  signal(event: string, payload: unknown, _state: SessionState): readonly SignalCommand[] {
    const one = claudeSignal(event, payload);
    return one ? [one] : [];
  },
  guard: claudeGuard,
};

function claudeSignal(event: string, payload: unknown): SignalCommand | null {
  switch (event) {
    case 'SessionStart': {
      const id = field(payload, 'session_id');
      return id ? { type: 'identify', agentSessionId: id } : null;
    }
    case 'UserPromptSubmit':
      return { type: 'busy' };
    case 'Stop':
      return { type: 'await', reason: 'turn-end' };
    case 'Notification': {
      const kind = field(payload, 'notification_type') ?? '';
      const message = (field(payload, 'message') ?? '').toLowerCase();
      if (kind === 'permission_prompt' || (!kind && message.includes('permission'))) return { type: 'await', reason: 'permission' };
      if (kind === 'elicitation_dialog') return { type: 'await', reason: 'question' };
      if (kind === 'idle_prompt' || (!kind && message.includes('waiting for your input'))) return { type: 'await', reason: 'turn-end' };
      return null;
    }
    case 'SessionEnd':
      return field(payload, 'reason') === 'clear' ? null : { type: 'interrupt', reason: 'process-exit' };
    default:
      return null;
  }
}

function claudeGuard(state: SessionState, others: readonly SessionState[]): string | null {
  const shared = commonGuard(state, others);
  if (shared) return shared;
  // Two sessions resuming one Claude conversation share its transcript: cleaning one up would orphan the other.
  const twin = state.agentSessionId && others.find((o) => o.id !== state.id && o.agentSessionId === state.agentSessionId && !['closed', 'failed'].includes(o.status));
  return twin ? `session ${twin.id} continues the same Claude conversation ${state.agentSessionId}` : null;
}
