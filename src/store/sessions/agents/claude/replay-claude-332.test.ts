import { describe, expect, it } from 'vitest';
import { AWAIT, EXITED, lines, NOT_SUBSCRIBED, recordedScreen, replayHooks, RUNNING, type Expect } from '../../../../../test/helpers/replay.js';
import { dialogOptions, optionNamed } from '../dialog-options.js';
import { claudeAdapter, claudeIdleOnScreen } from './claude.js';
import { claudeDialogOnScreen, claudeInputBox } from './claude-screens.js';

/*
 * Claude Code 2.1.332 (npm `claude-code-next`), recorded as 2.1.331 was: every hook line replayed through
 * the adapter, and its screens read as the pane reader reads them. What moved since 2.1.331: the auto-mode
 * dialog is reworded ("stay in auto mode" / "leave for accept edits mode and stop"), and after it a notice
 * stays in the transcript above the Bash dialog; the hooks fire as before (the dialog's only signal is a
 * late `agent_needs_input`, the Bash dialog's a late `permission_prompt`, neither a PermissionRequest).
 */

const AUTO_MODE = /^Auto mode can't check actions in this session and needs your choice \(auto mode:/;
const QUIET = (more: Expect): Expect => ({ ...NOT_SUBSCRIBED, ...more });

const claude332Table: Record<number, Expect> = {
  // auto: a plain turn.
  1: { status: 'running', source: 'hook', agentSessionId: expect.any(String) as unknown as string },
  2: RUNNING,
  3: QUIET({ status: 'running' }),
  4: AWAIT('turn-end'),
  // A Bash call auto mode allows: no dialog at all.
  5: RUNNING,
  6: QUIET({ status: 'running' }),
  7: RUNNING,
  8: QUIET({ status: 'running' }),
  9: AWAIT('turn-end'),
  10: QUIET({ status: 'awaiting', reason: 'turn-end' }),
  // A risky one: the auto-mode dialog's late notification is the wait; the Bash dialog's after it is the same wait.
  11: RUNNING,
  12: QUIET({ status: 'running' }),
  13: AWAIT('permission', { detail: AUTO_MODE }),
  14: AWAIT('permission', { detail: AUTO_MODE }),
  // Approved by name (Down to "Yes", Enter): the tool ran.
  15: { status: 'running', source: 'hook' },
  16: QUIET({ status: 'running' }),
  17: QUIET({ status: 'running' }),
  18: AWAIT('turn-end'),
  // AskUserQuestion: its PermissionRequest is the question.
  19: RUNNING,
  20: QUIET({ status: 'running' }),
  21: AWAIT('question'),
  22: RUNNING,
  23: QUIET({ status: 'running' }),
  24: AWAIT('turn-end'),
  25: QUIET({ status: 'awaiting', reason: 'turn-end' }),
  // A hung turn Esc-ed fires nothing: the next prompt is a running turn again; the 500 fails it.
  26: RUNNING,
  27: RUNNING,
  28: AWAIT('turn-end', { detail: /^the turn failed: server_error: API Error: 500/, turnFailures: 1 }),
  29: EXITED,
  // trust: a new session once the trust dialog is answered; a turn; /exit.
  30: { status: 'running', source: 'hook' },
  31: RUNNING,
  32: QUIET({ status: 'running' }),
  33: AWAIT('turn-end'),
  34: EXITED,
};

describe('replaying Claude Code 2.1.332’s recorded hooks (every line)', () => {
  const recorded = lines('claude-code-2.1.332-hooks.jsonl');

  it('the recording is what the table covers: every line after _meta has an expectation', () => {
    expect(recorded[0]).toMatchObject({ _meta: true, version: expect.stringMatching(/^2\.1\.332 /) });
    expect(Object.keys(claude332Table).map(Number)).toEqual(recorded.slice(1).map((_, i) => i + 1));
  });

  it('each line moves the session to the state the real program was in, with its source', () => {
    replayHooks(claudeAdapter, 'claude', recorded, claude332Table);
  });
});

describe('Claude Code 2.1.332’s screens, read from the pane', () => {
  const screen = (name: string) => recordedScreen(`claude-2.1.332-screen-${name}.txt`);

  it('the reworded auto-mode dialog, the Bash dialog under its notice and a question are waits on a person; the box after Esc is none', () => {
    expect(claudeDialogOnScreen(screen('automode'))).toMatchObject({ reason: 'permission', detail: expect.stringMatching(/^auto mode:/) });
    expect(claudeDialogOnScreen(screen('bash-approval'))).toMatchObject({ reason: 'permission', detail: expect.stringMatching(/Do you want to proceed\?.*: Bash command curl -s/) });
    expect(claudeDialogOnScreen(screen('ask'))).toMatchObject({ reason: 'question' });
    expect(claudeDialogOnScreen(screen('after-esc'))).toBeNull();
    expect(claudeIdleOnScreen(screen('after-esc'))).toBe(true);
    expect(claudeIdleOnScreen(screen('automode'))).toBe(false);
    expect(claudeInputBox(screen('after-esc'))).toBe('Hang [fake:hang]');
    expect(claudeInputBox(screen('bash-approval'))).toBeNull();
  });

  it('after a short turn in a tall pane (drawn from the top, blank rows under it), the input box is read, and empty, on both versions', () => {
    for (const file of ['claude-2.1.332-screen-after-turn.ansi', 'claude-2.1.197-screen-after-turn.ansi']) {
      const ansi = recordedScreen(file);
      expect(ansi.split('\n').length, file).toBeGreaterThan(45);
      expect(claudeInputBox(ansi), file).toBe('');
      expect(claudeIdleOnScreen(ansi.replace(/\x1b\[[0-9;:]*[A-Za-z]/g, '')), file).toBe(true);
      expect(claudeDialogOnScreen(ansi), file).toBeNull();
    }
    // A dialog drawn as high in the pane is read too.
    const trust = recordedScreen('claude-2.1.332-screen-automode.txt');
    expect(claudeDialogOnScreen(`${trust}${'\n'.repeat(40)}`)).toMatchObject({ reason: 'permission' });
  });

  it('dialog options: the trust dialog and the Bash dialog default to their No; trust and approve name the other', () => {
    const trust = dialogOptions(screen('trust'))!;
    expect(trust).toEqual({ options: ['No, exit', 'Yes, I trust this folder'], selected: 0 });
    expect(optionNamed(trust.options, 'trust')).toBe(1);
    const bash = dialogOptions(screen('bash-approval'))!;
    expect(bash).toEqual({ options: ['No', 'Yes'], selected: 0 });
    expect(optionNamed(bash.options, 'approve')).toBe(1);
  });
});
