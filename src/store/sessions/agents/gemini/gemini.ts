import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SessionState } from '../../../../projections/index.js';
import { installHooksSettings } from '../hooks-settings.js';
import { commonGuard, shq, signalCommand, type HarnessAdapter, type LaunchContext, type SignalCommand } from '../adapter.js';
import { sessionStartCommands } from '../signal.js';
import { GEMINI_FIRST_RUN, geminiDialogOnScreen, geminiIdleOnScreen, geminiInputBox } from './gemini-screens.js';

/**
 * The Gemini CLI hook events this adapter subscribes to (command hooks, each calling `trellis session
 * signal <id> <event>`), checked against 0.61.0's recorded payloads (test/agents/recordings/, replayed in
 * replay-gemini.test.ts). BeforeModel/AfterModel/BeforeToolSelection/PreCompress are left out: they fire
 * on every model call with the whole request, and say nothing the others do not.
 */
const HOOKS = ['SessionStart', 'BeforeAgent', 'AfterAgent', 'BeforeTool', 'AfterTool', 'Notification', 'SessionEnd'] as const;

/** The hooks' settings file: the worktree's project settings (kept out of git by the repository's exclude file). */
export const GEMINI_SETTINGS = '.gemini/settings.json';

/** What AfterAgent says when the turn produced no text: a failed request, or an Esc; the transcript tells which. */
const NO_RESPONSE = '[no response text]';
/** API errors no retry fixes: the key or the account is the problem (awaiting{auth}). */
const AUTH_ERROR = /"code":\s*(401|403)\b|UNAUTHENTICATED|PERMISSION_DENIED|API key not valid/;

const field = (payload: unknown, name: string): string | undefined => {
  const v = typeof payload === 'object' && payload !== null ? (payload as Record<string, unknown>)[name] : undefined;
  return typeof v === 'string' ? v : undefined;
};

/**
 * The error that ended the newest turn, from Gemini's own transcript (`transcript_path`, JSONL: a
 * `{type: "error", content}` record after the turn's user message; an Esc leaves an info record
 * instead), or null. Gemini writes the record as it shows the error, just before AfterAgent; read again
 * briefly if the turn's end is not in the file yet.
 */
export function geminiTurnError(transcriptPath: string): string | null {
  for (let attempt = 0; attempt < 5; attempt++) {
    let text = '';
    try {
      text = readFileSync(transcriptPath, 'utf8');
    } catch {
      return null;
    }
    const lines = text.trimEnd().split('\n');
    for (let i = lines.length - 1; i >= 0; i--) {
      let rec: Record<string, unknown>;
      try {
        rec = JSON.parse(lines[i]!) as Record<string, unknown>;
      } catch {
        continue;
      }
      if (rec.type === 'error') return typeof rec.content === 'string' ? rec.content : 'the request failed';
      if (rec.type === 'info' && typeof rec.content === 'string' && /Request cancelled/.test(rec.content)) return null;
      if (rec.type === 'user' || rec.type === 'gemini') break;
    }
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
  }
  return null;
}

/**
 * `gemini` (Gemini CLI): launched with the task as its interactive first prompt, `--resume <session id>`
 * on resume. Turn signals come from its command hooks, written into the worktree's `.gemini/settings.json`
 * (Gemini runs a project's hooks only in a folder it trusts): `SessionStart` records the agent's session
 * id (after a resume, or with no task, the agent sits idle at its input); `BeforeAgent` → running;
 * `Notification{ToolPermission}` → awaiting{permission} naming the call; `AfterTool` → running (the
 * permission was answered); `AfterAgent` → awaiting{turn-end}, or a failed turn when it had no response
 * and Gemini's transcript records the error (awaiting{auth} for a rejected key); `SessionEnd{exit}` →
 * interrupted. A denied permission and Esc mid-turn fire no hook: the pane shows the input box back.
 */
export const geminiAdapter: HarnessAdapter = {
  name: 'gemini',
  events: HOOKS,
  ownedPaths: [GEMINI_SETTINGS],
  readsProse: true,
  queuesInput: false,
  command(ctx: LaunchContext) {
    const s = ctx.session;
    // Gemini CLI turns non-interactive when its environment says CI (`CI`, `CONTINUOUS_INTEGRATION`): in a
    // session's pane it is a person's terminal wherever Trellis itself runs, so neither reaches it (a CI
    // run's resumed gemini never took its next prompt).
    const gemini = 'exec env -u CI -u CONTINUOUS_INTEGRATION gemini';
    // Both glued to their option: neither the task nor the id can be read as an option.
    if (ctx.resume) return `${gemini} --resume=${s.agentSessionId ? shq(s.agentSessionId) : 'latest'}`;
    return s.task.trim() ? `${gemini} --prompt-interactive=${shq(s.task)}` : gemini;
  },
  async install(worktree: string, ctx: LaunchContext) {
    await installHooksSettings(worktree, GEMINI_SETTINGS, HOOKS, (event) => ({ type: 'command', name: `trellis-${event}`, command: signalCommand(ctx, event) }));
  },
  signal(event: string, payload: unknown, state: SessionState): readonly SignalCommand[] {
    return geminiSignal(event, payload, state);
  },
  idleOnScreen: geminiIdleOnScreen,
  dialogOnScreen: geminiDialogOnScreen,
  inputBox: geminiInputBox,
  // Its keypress reader turns an Enter within 30 ms of the key before it into a newline (FAST_RETURN_TIMEOUT
  // in 0.61.0); a loaded machine hands it the paste and the Enter in one read.
  enterAfterPasteMs: 150,
  // End of line, then delete to its start.
  clearInputKeys: ['C-e', 'C-u'],
  versionArgs: ['gemini', '--version'],
  program: { program: 'gemini', install: 'npm install -g @google/gemini-cli' },
  firstRunScreens: GEMINI_FIRST_RUN,
  guard: commonGuard,
};

function geminiSignal(event: string, payload: unknown, state: SessionState): readonly SignalCommand[] {
  switch (event) {
    case 'SessionStart':
      return sessionStartCommands(payload, state);
    case 'BeforeAgent':
    case 'AfterTool':
      return [{ type: 'busy' }];
    case 'BeforeTool':
      // Fires before the permission is asked, and for every tool that needs none: the turn is running.
      return [];
    case 'Notification': {
      if (field(payload, 'notification_type') !== 'ToolPermission') return [];
      const details = (payload as Record<string, unknown>).details;
      const what = field(details, 'command') ?? field(details, 'title');
      return [{ type: 'await', reason: 'permission', detail: `${field(payload, 'message') ?? 'a tool asks permission'}${what ? `: ${what}` : ''}` }];
    }
    case 'AfterAgent': {
      const transcript = field(payload, 'transcript_path');
      const error = field(payload, 'prompt_response') === NO_RESPONSE && transcript ? geminiTurnError(transcript) : null;
      if (!error) return [{ type: 'await', reason: 'turn-end' }];
      if (AUTH_ERROR.test(error)) return [{ type: 'await', reason: 'auth', detail: `${error} (give the agent a valid GEMINI_API_KEY, or /auth in the session)` }];
      return [
        { type: 'turn-fail', reason: error },
        { type: 'await', reason: 'turn-end', detail: `the turn failed: ${error}` },
      ];
    }
    case 'SessionEnd':
      return field(payload, 'reason') === 'exit' ? [{ type: 'interrupt', reason: 'process-exit' }] : [];
    default:
      return [];
  }
}
