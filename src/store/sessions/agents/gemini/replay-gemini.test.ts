import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SessionState } from '../../../../projections/session.js';
import { apply, AWAIT, check, EXITED, launched, lines, NOT_SUBSCRIBED, recordedScreen, RUNNING, signal, type Expect } from '../../../../../test/helpers/replay.js';
import { dialogOptions, optionNamed } from '../dialog-options.js';
import { geminiAdapter } from './gemini.js';
import { geminiDialogOnScreen, geminiIdleOnScreen, geminiInputBox } from './gemini-screens.js';

/*
 * Gemini CLI 0.61.0's recorded hooks (test/agents/recordings/gemini-cli-0.61.0-hooks.jsonl), every line
 * replayed through the adapter and the session's decide/evolve. Its AfterAgent says only
 * "[no response text]" for both a failed request and an Esc: the transcript it writes tells them apart,
 * so each AfterAgent is replayed against the recorded transcript as it stood at that moment.
 */

const QUIET = (more: Expect): Expect => ({ ...NOT_SUBSCRIBED, ...more });
const FAILED_400 = /^the turn failed: \[API Error: \{"error":\{"code":400,"message":"The fake model refuses this request"/;

const geminiTable: Record<number, Expect> = {
  // basic: a turn.
  1: { status: 'running', source: 'hook', agentSessionId: '58e3296c-d8a7-4129-afdf-c32e7fed3b3c' },
  2: RUNNING,
  3: QUIET({ status: 'running' }),
  4: QUIET({ status: 'running' }),
  5: QUIET({ status: 'running' }),
  6: QUIET({ status: 'running' }),
  7: AWAIT('turn-end'),
  // run_shell_command asked, allowed once.
  8: RUNNING,
  9: QUIET({ status: 'running' }),
  10: QUIET({ status: 'running' }),
  11: QUIET({ status: 'running' }),
  12: QUIET({ status: 'running' }),
  13: RUNNING,
  14: AWAIT('permission', { detail: 'Tool Confirm Shell Command requires execution: touch approved-file' }),
  15: { status: 'running', source: 'hook' },
  16: QUIET({ status: 'running' }),
  17: QUIET({ status: 'running' }),
  18: QUIET({ status: 'running' }),
  19: QUIET({ status: 'running' }),
  20: AWAIT('turn-end'),
  // Asked again, denied with Esc: no hook at all (the pane shows the box back); the next prompt runs.
  21: RUNNING,
  22: QUIET({ status: 'running' }),
  23: QUIET({ status: 'running' }),
  24: QUIET({ status: 'running' }),
  25: QUIET({ status: 'running' }),
  26: RUNNING,
  27: AWAIT('permission', { detail: 'Tool Confirm Shell Command requires execution: touch denied-file' }),
  // A 400: a failed turn, counted (the transcript's error record).
  28: RUNNING,
  29: QUIET({ status: 'running' }),
  30: QUIET({ status: 'running' }),
  31: QUIET({ status: 'running' }),
  32: AWAIT('turn-end', { detail: FAILED_400, turnFailures: 1 }),
  // A hung turn Esc-ed: the same "[no response text]", but the transcript says cancelled: no failure (a turn that ends well resets the count).
  33: RUNNING,
  34: QUIET({ status: 'running' }),
  35: QUIET({ status: 'running' }),
  36: QUIET({ status: 'running' }),
  37: AWAIT('turn-end', { detail: null, turnFailures: 0 }),
  // /quit: SessionEnd three times; the first ends it.
  38: EXITED,
  39: { ...EXITED, refused: true },
  40: { ...EXITED, refused: true },
  // trellis session resume → gemini --resume <id>: idle at its input, then a turn; Ctrl-C Ctrl-C.
  41: { status: 'awaiting', reason: 'turn-end', source: 'hook', agentSessionId: '58e3296c-d8a7-4129-afdf-c32e7fed3b3c' },
  42: RUNNING,
  43: QUIET({ status: 'running' }),
  44: QUIET({ status: 'running' }),
  45: QUIET({ status: 'running' }),
  46: QUIET({ status: 'running' }),
  47: AWAIT('turn-end', { turnFailures: 0 }),
  48: EXITED,
  49: { ...EXITED, refused: true },
};

/** The recorded transcript as it stood when a hook fired: its records up to the hook's timestamp. */
function transcriptAt(timestamp: string): string {
  const out: string[] = [];
  for (const rec of lines('gemini-0.61.0-transcript.jsonl')) {
    if (typeof rec.timestamp === 'string' && rec.timestamp > timestamp) break;
    out.push(JSON.stringify(rec));
  }
  const path = join(mkdtempSync(join(tmpdir(), 'trellis-gemini-transcript-')), 'session.jsonl');
  writeFileSync(path, `${out.join('\n')}\n`);
  return path;
}

describe('replaying Gemini CLI 0.61.0’s recorded hooks (every line)', () => {
  const recorded = lines('gemini-cli-0.61.0-hooks.jsonl');

  it('the recording is what the table covers: every line after _meta has an expectation', () => {
    expect(recorded[0]).toMatchObject({ _meta: true, version: expect.stringMatching(/^0\.61\.0 /) });
    expect(Object.keys(geminiTable).map(Number)).toEqual(recorded.slice(1).map((_, i) => i + 1));
  });

  it('each line moves the session to the state the real program was in, with its source', () => {
    let state: SessionState | null = null;
    recorded.slice(1).forEach((line, i) => {
      const n = i + 1;
      let payload = line.payload as Record<string, unknown>;
      const event = line.event as string;
      expect(payload.hook_event_name).toBe(event);
      if (event === 'SessionStart' && payload.source === 'startup') state = launched('gemini', 'say hi');
      if (event === 'SessionStart' && payload.source === 'resume') {
        state = apply(apply(state!, { type: 'resume' }, 'user'), { type: 'launch', tmuxSession: 's1', pane: '%2', awaitsSignal: true }, 'supervisor');
      }
      if (event === 'AfterAgent') payload = { ...payload, transcript_path: transcriptAt(payload.timestamp as string) };
      const r = signal(geminiAdapter, state!, event, payload);
      state = r.state;
      check(state, r.ignored, geminiTable[n]!, `line ${n} (${line.scenario} ${event} ${JSON.stringify(payload.notification_type ?? payload.reason ?? payload.source ?? '')})`);
    });
  });

  it('three failed turns in a row count to the quarantine threshold; a rejected key is awaiting{auth}, not counted', () => {
    const fail = recorded.find((l) => l.event === 'AfterAgent' && (l.payload as { prompt_response?: string }).prompt_response === '[no response text]')!.payload as Record<string, unknown>;
    const submit = recorded.find((l) => l.event === 'BeforeAgent')!.payload;
    const failing = { ...fail, transcript_path: transcriptAt(fail.timestamp as string) };
    let state = signal(geminiAdapter, launched('gemini', 'say hi'), 'SessionStart', { hook_event_name: 'SessionStart', session_id: 'g', source: 'startup' }).state;
    for (let i = 0; i < 3; i++) {
      state = signal(geminiAdapter, state, 'BeforeAgent', submit).state;
      state = signal(geminiAdapter, state, 'AfterAgent', failing).state;
    }
    expect(state).toMatchObject({ status: 'awaiting', reason: 'turn-end', turnFailures: 3 });
    const dir = mkdtempSync(join(tmpdir(), 'trellis-gemini-transcript-'));
    writeFileSync(join(dir, 't.jsonl'), `${JSON.stringify({ type: 'user', content: [{ text: 'x' }] })}\n${JSON.stringify({ type: 'error', content: '[API Error: {"error":{"code":401,"message":"API key not valid. Please pass a valid API key.","status":"UNAUTHENTICATED"}}]' })}\n`);
    const auth = signal(geminiAdapter, signal(geminiAdapter, state, 'BeforeAgent', submit).state, 'AfterAgent', { ...fail, transcript_path: join(dir, 't.jsonl') }).state;
    expect(auth).toMatchObject({ status: 'awaiting', reason: 'auth', turnFailures: 3 });
  });
});

describe('Gemini CLI 0.61.0’s screens, read from the pane', () => {
  const screen = (name: string) => recordedScreen(`gemini-0.61.0-screen-${name}.txt`);

  it('the permission dialog is a wait on a person, answered by name; a running turn is not idle; the box back after Esc is', () => {
    expect(geminiDialogOnScreen(screen('permission'))).toEqual({ reason: 'permission', detail: 'Allow execution of [Shell]?: Shell touch approved-file' });
    const options = dialogOptions(screen('permission'))!;
    expect(options).toEqual({ options: ['Allow once', 'Allow for this session', 'No, suggest changes (esc)'], selected: 0 });
    expect(optionNamed(options.options, 'approve')).toBe(0);
    expect(optionNamed(options.options, 'deny')).toBe(2);
    expect(geminiInputBox(screen('permission'))).toBeNull();
    expect(geminiIdleOnScreen(screen('running'))).toBe(false);
    expect(geminiIdleOnScreen(screen('after-esc'))).toBe(true);
    expect(geminiIdleOnScreen(screen('failed'))).toBe(true);
    expect(geminiDialogOnScreen(screen('after-esc'))).toBeNull();
  });

  it('the input box: the placeholder is empty, typed text is text', () => {
    expect(geminiInputBox(screen('after-esc'))).toBe('');
    expect(geminiInputBox(screen('after-esc').replace('>   Type your message or @path/to/file', '> What did I say'))).toBe('What did I say');
  });
});
