import { describe, expect, it } from 'vitest';
import type { SessionState } from '../../../../projections/session.js';
import { apply, AWAIT, EXITED, launched, lines, NOT_SUBSCRIBED, recordedScreen, replayHooks, RUNNING, signal, check, type Expect } from '../../../../../test/helpers/replay.js';
import { claudeAdapter, claudeIdleOnScreen } from './claude.js';
import { claudeDialogOnScreen, claudeInputBox } from './claude-screens.js';

/*
 * The recordings of the real programs (`test/agents/recordings/`, copied from ../shared/agents/), every
 * line replayed through the adapter's mapping and the session's decide/evolve, as `trellis session
 * signal` runs them: the state after each line is asserted, so the protocol as it is — not our idea
 * of it — drives the table.
 */

const SERVER_ERROR = /^the turn failed: server_error: API Error: Unable to connect to API \(ConnectionRefused\)$/;
const NOT_LOGGED_IN = /^authentication_failed: Not logged in · Please run \/login \(log in: run \/login/;

/**
 * The state after each recorded line (1-based, the `_meta` line is 0). Every line is listed: a line left
 * out of this table fails the test, so a new recording cannot slip past unexplained.
 */
const claudeTable: Record<number, Expect> = {
  // hooklog-D: a turn fails (no network), then /clear, /resume <id>, /exit.
  // The agent's own first signal ends `starting`.
  1: { status: 'running', source: 'hook', agentSessionId: '3ae1fb1e-ba21-4429-816d-8267b480295f' },
  2: RUNNING,
  3: AWAIT('turn-end', { detail: SERVER_ERROR, turnFailures: 1 }),
  // The idle prompt ~60 s after the failure: neither a new state nor a reset failure count.
  4: AWAIT('turn-end', { detail: SERVER_ERROR, turnFailures: 1 }),
  5: AWAIT('turn-end', { turnFailures: 1 }),
  6: AWAIT('turn-end', { turnFailures: 1 }),
  // /resume ends one conversation and starts another inside the same live program.
  7: AWAIT('turn-end', { turnFailures: 1 }),
  8: AWAIT('turn-end', { turnFailures: 1 }),
  9: EXITED,
  // hooklog-E: a full turn; Bash with a permission dialog (approved); again (Esc-rejected: no hook);
  // a turn; Esc during a turn (no hook); Ctrl-C exit. Then AskUserQuestion.
  10: RUNNING,
  11: RUNNING,
  12: { ...NOT_SUBSCRIBED, status: 'running' },
  13: AWAIT('turn-end', { turnFailures: 0 }),
  14: RUNNING,
  15: { ...NOT_SUBSCRIBED, status: 'running' },
  16: AWAIT('permission'),
  17: AWAIT('permission'),
  // The approved tool ran: working again.
  18: { status: 'running', source: 'hook' },
  19: { ...NOT_SUBSCRIBED, status: 'running' },
  20: { ...NOT_SUBSCRIBED, status: 'running' },
  21: AWAIT('turn-end'),
  22: RUNNING,
  23: { ...NOT_SUBSCRIBED, status: 'running' },
  24: AWAIT('permission'),
  25: AWAIT('permission'),
  // Rejected with Esc (no hook): the next prompt is the first signal that the dialog is gone.
  26: RUNNING,
  27: { ...NOT_SUBSCRIBED, status: 'running' },
  28: AWAIT('turn-end'),
  29: RUNNING,
  30: EXITED,
  31: RUNNING,
  32: RUNNING,
  33: { ...NOT_SUBSCRIBED, status: 'running' },
  34: AWAIT('turn-end'),
  35: RUNNING,
  36: { ...NOT_SUBSCRIBED, status: 'running' },
  // AskUserQuestion: a question, although claude announces its dialog as a permission prompt.
  37: AWAIT('question'),
  38: AWAIT('question'),
  39: { status: 'running', source: 'hook' },
  40: { ...NOT_SUBSCRIBED, status: 'running' },
  41: { ...NOT_SUBSCRIBED, status: 'running' },
  42: AWAIT('turn-end'),
  43: EXITED,
  // hooklog-trellis: sessions spawned by Trellis. Not logged in: every turn fails authentication.
  44: RUNNING,
  45: RUNNING,
  46: AWAIT('auth', { detail: NOT_LOGGED_IN, turnFailures: 0 }),
  47: AWAIT('auth', { detail: NOT_LOGGED_IN }),
  48: RUNNING,
  49: AWAIT('auth', { detail: NOT_LOGGED_IN }),
  50: RUNNING,
  51: AWAIT('auth'),
  52: RUNNING,
  53: AWAIT('auth'),
  54: RUNNING,
  55: AWAIT('auth', { turnFailures: 0 }),
  // Its tmux session killed (SessionEnd{other}), then `trellis session resume`: idle at its input.
  56: EXITED,
  57: AWAIT('turn-end'),
  58: RUNNING,
  59: RUNNING,
  60: AWAIT('auth'),
  61: RUNNING,
  62: RUNNING,
  63: AWAIT('turn-end', { detail: SERVER_ERROR, turnFailures: 1 }),
  64: AWAIT('turn-end', { detail: SERVER_ERROR, turnFailures: 1 }),
  65: RUNNING,
  66: RUNNING,
  67: { ...NOT_SUBSCRIBED, status: 'running' },
  68: AWAIT('turn-end'),
  69: RUNNING,
  70: { ...NOT_SUBSCRIBED, status: 'running' },
  71: AWAIT('permission'),
  72: AWAIT('permission'),
  73: { status: 'running', source: 'hook' },
  74: { ...NOT_SUBSCRIBED, status: 'running' },
  75: { ...NOT_SUBSCRIBED, status: 'running' },
  76: AWAIT('turn-end'),
  77: AWAIT('turn-end'),
  78: AWAIT('turn-end', { agentSessionId: expect.any(String) as unknown as string }),
  79: AWAIT('turn-end'),
  80: AWAIT('turn-end'),
  81: RUNNING,
  82: { ...NOT_SUBSCRIBED, status: 'running' },
  83: AWAIT('turn-end'),
  84: AWAIT('turn-end'),
  85: RUNNING,
  86: RUNNING,
  87: AWAIT('turn-end'),
  88: { ...NOT_SUBSCRIBED, ...AWAIT('turn-end') },
  89: { ...NOT_SUBSCRIBED, ...AWAIT('turn-end') },
  90: AWAIT('turn-end'),
  91: RUNNING,
  92: RUNNING,
  93: AWAIT('turn-end'),
  94: { ...NOT_SUBSCRIBED, ...AWAIT('turn-end') },
  95: RUNNING,
  96: { ...NOT_SUBSCRIBED, status: 'running' },
  97: AWAIT('permission'),
  98: AWAIT('permission'),
  99: { status: 'running', source: 'hook' },
  100: { ...NOT_SUBSCRIBED, status: 'running' },
  101: { ...NOT_SUBSCRIBED, status: 'running' },
  102: AWAIT('turn-end'),
};

const AUTO_MODE = /^Auto mode can't check actions in this session and needs your choice \(auto mode:/;

/**
 * Claude Code 2.1.331 (auto mode is its default). The auto-mode dialog fires no PermissionRequest: its
 * `agent_needs_input` notification is the wait, and the reworded Bash dialog's `permission_prompt` after
 * it changes nothing (the same wait). Esc mid-turn fires nothing (line 26 → 27: the next prompt).
 */
const claude331Table: Record<number, Expect> = {
  1: { status: 'running', source: 'hook', agentSessionId: '1f1a591e-363c-41e8-86be-e04a1cdc58e7' },
  2: RUNNING,
  // A Bash call auto mode allows: no dialog at all.
  3: { ...NOT_SUBSCRIBED, status: 'running' },
  4: RUNNING,
  5: { ...NOT_SUBSCRIBED, status: 'running' },
  6: { ...NOT_SUBSCRIBED, status: 'running' },
  7: AWAIT('turn-end'),
  8: AWAIT('turn-end'),
  9: RUNNING,
  10: { ...NOT_SUBSCRIBED, status: 'running' },
  11: AWAIT('permission', { detail: AUTO_MODE }),
  12: AWAIT('permission', { detail: AUTO_MODE }),
  // Approved by name (Down to "Yes", Enter): the tool ran.
  13: { status: 'running', source: 'hook' },
  14: { ...NOT_SUBSCRIBED, status: 'running' },
  15: { ...NOT_SUBSCRIBED, status: 'running' },
  16: AWAIT('turn-end'),
  17: AWAIT('turn-end'),
  18: RUNNING,
  19: { ...NOT_SUBSCRIBED, status: 'running' },
  20: AWAIT('question'),
  21: RUNNING,
  22: { ...NOT_SUBSCRIBED, status: 'running' },
  23: { ...NOT_SUBSCRIBED, status: 'running' },
  24: AWAIT('turn-end'),
  25: AWAIT('turn-end'),
  26: RUNNING,
  27: RUNNING,
  28: AWAIT('turn-end', { detail: /^the turn failed: server_error: API Error: 500/, turnFailures: 1 }),
  29: AWAIT('turn-end', { turnFailures: 1 }),
  30: EXITED,
  // trust: the main checkout (trusted at its dialog), then a worktree of it (no dialog), each /exit-ed.
  31: { status: 'running', source: 'hook' },
  32: RUNNING,
  33: { ...NOT_SUBSCRIBED, status: 'running' },
  34: AWAIT('turn-end'),
  35: AWAIT('turn-end'),
  36: { status: 'running', source: 'hook' },
  37: RUNNING,
  38: { ...NOT_SUBSCRIBED, status: 'running' },
  39: AWAIT('turn-end'),
  40: AWAIT('turn-end'),
  41: EXITED,
  // The main checkout's program exits too: this replay follows one session, already ended.
  42: { ...EXITED, refused: true },
};

describe('replaying Claude Code 2.1.331’s recorded hooks (every line)', () => {
  const recorded = lines('claude-code-2.1.331-hooks.jsonl');

  it('the recording is what the table covers: every line after _meta has an expectation', () => {
    expect(recorded[0]).toMatchObject({ _meta: true, version: expect.stringMatching(/^2\.1\.331 /) });
    expect(Object.keys(claude331Table).map(Number)).toEqual(recorded.slice(1).map((_, i) => i + 1));
  });

  it('each line moves the session to the state the real program was in, with its source', () => {
    replayHooks(claudeAdapter, 'claude', recorded, claude331Table);
  });
});

describe('Claude Code 2.1.331’s screens, read from the pane', () => {
  const screen = (name: string) => recordedScreen(`claude-2.1.331-screen-${name}`);

  it('the auto-mode dialog, the reworded Bash dialog and a question are waits on a person; a running turn and the idle input box are none', () => {
    expect(claudeDialogOnScreen(screen('automode.txt'))).toMatchObject({ reason: 'permission', detail: expect.stringMatching(/^auto mode:/) });
    expect(claudeDialogOnScreen(screen('bash-approval.txt'))).toMatchObject({ reason: 'permission', detail: expect.stringMatching(/Do you want to proceed\?.*: Bash command curl -s/) });
    expect(claudeDialogOnScreen(screen('ask.txt'))).toMatchObject({ reason: 'question' });
    expect(claudeDialogOnScreen(screen('running.txt'))).toBeNull();
    expect(claudeDialogOnScreen(screen('after-esc.txt'))).toBeNull();
    expect(claudeIdleOnScreen(screen('running.txt'))).toBe(false);
    expect(claudeIdleOnScreen(screen('after-esc.txt'))).toBe(true);
    expect(claudeIdleOnScreen(screen('automode.txt'))).toBe(false);
  });

  it('the input box: its faint placeholder is empty, typed text is text, a dialog has no input box', () => {
    expect(claudeInputBox(screen('input-empty.ansi'))).toBe('');
    expect(claudeInputBox(screen('input-typed.ansi'))).toBe('typed');
    // The placeholder a failed turn leaves is known by its words too (a capture once drew it without faint).
    expect(claudeInputBox(screen('input-empty.ansi').replace(/\x1b\[[0-9;:]*m/g, ''))).toBe('');
    expect(claudeInputBox(screen('bash-approval.txt'))).toBeNull();
    // After Esc the interrupted prompt is back in the box (2.1.331 as 2.1.197).
    expect(claudeInputBox(screen('after-esc.txt'))).toBe('Think [fake:hang]');
  });
});

describe('replaying Claude Code 2.1.197’s recorded hooks (every line)', () => {
  const recorded = lines('claude-code-2.1.197-hooks.jsonl');

  it('the recording is what the table covers: every line after _meta has an expectation', () => {
    expect(recorded[0]).toMatchObject({ _meta: true });
    expect(Object.keys(claudeTable).map(Number)).toEqual(recorded.slice(1).map((_, i) => i + 1));
  });

  it('each line moves the session to the state the real program was in, with its source', () => {
    let state: SessionState | null = null;
    recorded.slice(1).forEach((line, i) => {
      const n = i + 1;
      const payload = line.payload as Record<string, unknown>;
      const event = line.event as string;
      expect(payload.hook_event_name).toBe(event);
      // Each startup is a session Trellis launched (task: its first prompt); a resume after an exit is `trellis session resume`.
      if (event === 'SessionStart' && payload.source === 'startup') state = launched('claude', 'say hi');
      if (event === 'SessionStart' && payload.source === 'resume' && state!.status === 'interrupted') {
        state = apply(apply(state!, { type: 'resume' }, 'user'), { type: 'launch', tmuxSession: 's1', pane: '%2', awaitsSignal: true }, 'supervisor');
      }
      const r = signal(claudeAdapter, state!, event, payload);
      state = r.state;
      check(state, r.ignored, claudeTable[n]!, `line ${n} (${line.scenario} ${event} ${JSON.stringify(payload.notification_type ?? payload.reason ?? payload.error ?? payload.tool_name ?? payload.source ?? '')})`);
    });
  });

  it('failed turns in a row count to the quarantine threshold; the idle notices between them never reset it', () => {
    const fail = recorded.slice(1).find((l) => (l.payload as { error?: string }).error === 'server_error')!.payload;
    const idle = recorded.slice(1).find((l) => (l.payload as { notification_type?: string }).notification_type === 'idle_prompt')!.payload;
    const submit = recorded.find((l) => l.event === 'UserPromptSubmit')!.payload;
    let state = launched('claude', 'say hi');
    for (let i = 0; i < 3; i++) {
      if (i > 0) state = signal(claudeAdapter, state, 'UserPromptSubmit', submit).state;
      state = signal(claudeAdapter, state, 'StopFailure', fail).state;
      state = signal(claudeAdapter, state, 'Notification', idle).state;
    }
    expect(state).toMatchObject({ status: 'awaiting', reason: 'turn-end', turnFailures: 3 });
  });

  it('malformed or unknown hook input is ignored with a reason, never a crash or a changed state', () => {
    const base = launched('claude', 'say hi');
    const stop = recorded.find((l) => l.event === 'Stop')!.payload as Record<string, unknown>;
    for (const [event, payload] of [
      ['Explode', {}],
      ['Stop', null],
      ['Stop', 'Stop'],
      ['Stop', [stop]],
      ['Stop', { ...stop, hook_event_name: 'SessionEnd' }],
      ['MessageDisplay', { hook_event_name: 'MessageDisplay' }],
    ] as const) {
      const r = signal(claudeAdapter, base, event, payload);
      expect(r.state, `${event} ${JSON.stringify(payload)}`).toBe(base);
      expect(r.ignored, `${event} ${JSON.stringify(payload)}`).toHaveLength(1);
    }
    // Fields of the wrong type or missing: nothing guessed.
    for (const payload of [{ hook_event_name: 'Notification' }, { hook_event_name: 'Notification', notification_type: 7 }, { hook_event_name: 'Notification', notification_type: 'auth_success' }]) {
      expect(signal(claudeAdapter, base, 'Notification', payload)).toEqual({ state: base, ignored: [] });
    }
    expect(signal(claudeAdapter, base, 'SessionEnd', { hook_event_name: 'SessionEnd', reason: 'someday' })).toEqual({ state: base, ignored: [] });
    // A signal the state refuses (a hook racing a close) is ignored, not thrown.
    const closed = apply(base, { type: 'close', wip: null }, 'user');
    expect(signal(claudeAdapter, closed, 'Stop', stop)).toMatchObject({ state: closed, ignored: [expect.stringContaining('closed')] });
  });
});

describe('Claude Code 2.1.197’s screens: Esc mid-turn fires no hook, the pane shows it', () => {
  const screen = (name: string) => recordedScreen(`claude-2.1.197-screen-${name}.txt`);

  it('a turn under way is not idle; after Esc the input box is back with no work under way', () => {
    expect(claudeIdleOnScreen(screen('running'))).toBe(false);
    expect(claudeIdleOnScreen(screen('after-esc'))).toBe(true);
    // A dialog is never read as idle.
    expect(claudeIdleOnScreen(`${screen('after-esc')}\n Do you want to proceed?\n ❯ 1. Yes`)).toBe(false);
    expect(claudeIdleOnScreen('')).toBe(false);
  });

  it('read from the pane, idle ends a running turn (source pane) and changes no other wait', () => {
    const running = signal(claudeAdapter, launched('claude', 'x'), 'SessionStart', { hook_event_name: 'SessionStart', session_id: 'a', source: 'startup' }).state;
    expect(running.status).toBe('running');
    expect(apply(running, { type: 'idle' }, 'pane')).toMatchObject({ status: 'awaiting', reason: 'turn-end', source: 'pane' });
    const asking = apply(running, { type: 'await', reason: 'permission' }, 'hook');
    expect(apply(asking, { type: 'idle' }, 'pane')).toBe(asking);
  });
});
