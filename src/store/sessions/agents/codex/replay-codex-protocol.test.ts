import { describe, expect, it } from 'vitest';
import type { SessionState } from '../../../../projections/session.js';
import { launched, lines, signal } from '../../../../../test/helpers/replay.js';
import { codexAdapter } from './codex.js';
import { APPROVAL_REQUESTS, appServerSupported, decisionNames, decisionValue, PROTOCOL_EVENTS } from './codex-protocol.js';

/*
 * Codex's recorded app-server conversations (`test/agents/recordings/codex-<version>-app-server.jsonl`),
 * every message the server sent replayed through the adapter's mapping and the session's decide/evolve,
 * as the watcher hands them to `signalSession`: what each scenario leaves the session in.
 */

type Msg = { method?: string; id?: number; params?: Record<string, unknown> };

describe.each(['0.169.0', '0.171.0'])('replaying Codex %s’s recorded app-server conversation (every message)', (version) => {
  const recorded = lines(`codex-${version}-app-server.jsonl`);
  const incoming = recorded.slice(1).filter((l) => l.dir === 'in').map((l) => ({ scenario: String(l.scenario), msg: l.msg as Msg }));
  const thread = String((incoming.find((m) => m.msg.method === 'thread/started')!.msg.params!.thread as { id: string }).id);

  /** Replays one scenario's server messages the watcher forwards, from a session waiting at its turn's end. */
  function replay(scenario: string, from: SessionState): SessionState {
    let state = from;
    for (const { msg } of incoming.filter((m) => m.scenario === scenario)) {
      if (!msg.method || !(PROTOCOL_EVENTS as readonly string[]).includes(msg.method)) continue;
      const r = signal(codexAdapter, state, msg.method, msg.params ?? {});
      expect(r.ignored, `${scenario} ${msg.method}`).toEqual([]);
      state = r.state;
      if (APPROVAL_REQUESTS.has(msg.method)) {
        expect(state).toMatchObject({ status: 'awaiting', reason: 'permission' });
        expect(state.detail).toMatch(/^run \/bin\/bash -lc 'touch (approved|declined)-file' \(Run the scripted command\?\); options: accept, acceptWithExecpolicyAmendment, cancel, decline$/);
      }
    }
    return state;
  }

  const atTurnEnd = (): SessionState => signal(codexAdapter, launched('codex', 'say hi'), 'app-server/thread', { threadId: thread, idle: true }).state;

  it('the thread names the session; a text turn runs, then ends at turn-end, from the protocol', () => {
    const start = atTurnEnd();
    expect(start).toMatchObject({ agentSessionId: thread, status: 'awaiting', reason: 'turn-end' });
    const after = replay('text', start);
    expect(after).toMatchObject({ status: 'awaiting', reason: 'turn-end', detail: null, turnFailures: 0 });
  });

  it('an approval waits naming its decisions; resolved, the turn runs on and ends', () => {
    for (const scenario of ['approve', 'decline']) expect(replay(scenario, atTurnEnd()), scenario).toMatchObject({ status: 'awaiting', reason: 'turn-end' });
  });

  it('a 401 is awaiting{auth} naming httpConnectionFailed 401; a 400 a failed turn naming codexErrorInfo other', () => {
    const auth = replay('fail-401', atTurnEnd());
    expect(auth).toMatchObject({ status: 'awaiting', reason: 'auth' });
    expect(auth.detail).toMatch(/^httpConnectionFailed 401: unexpected status 401 Unauthorized/);
    const failed = replay('fail-400', atTurnEnd());
    expect(failed).toMatchObject({ status: 'awaiting', reason: 'turn-end', turnFailures: 1 });
    expect(failed.detail).toMatch(/^the turn failed: other: /);
  });

  it('an interrupted turn ends at turn-end, saying so (no failure counted)', () => {
    expect(replay('interrupt', atTurnEnd())).toMatchObject({ status: 'awaiting', reason: 'turn-end', detail: 'the turn was interrupted', turnFailures: 0 });
  });

  it('another thread’s turn changes nothing; a stall waits, and the turn’s end clears it', () => {
    const start = replay('interrupt', atTurnEnd());
    expect(signal(codexAdapter, start, 'turn/started', { threadId: 'another-thread' }).state).toBe(start);
    const running = signal(codexAdapter, start, 'turn/started', { threadId: thread }).state;
    const stalled = signal(codexAdapter, running, 'app-server/stalled', { threadId: thread, detail: 'silent' }).state;
    expect(stalled).toMatchObject({ status: 'awaiting', reason: 'stalled', detail: 'silent' });
    expect(signal(codexAdapter, stalled, 'turn/completed', { threadId: thread, turn: { status: 'completed' } }).state).toMatchObject({ reason: 'turn-end', detail: null });
  });
});

describe('decisions by name', () => {
  const params = { availableDecisions: ['accept', { acceptWithExecpolicyAmendment: { execpolicy_amendment: ['touch', 'x'] } }, 'cancel'] };
  it('names each offered decision, an object by its key, and decline', () => {
    expect(decisionNames(params)).toEqual(['accept', 'acceptWithExecpolicyAmendment', 'cancel', 'decline']);
    expect(decisionNames({ availableDecisions: ['accept', 'decline'] })).toEqual(['accept', 'decline']);
  });
  it('sends the offered value itself (an object decision keeps its data), else the bare name', () => {
    expect(decisionValue(params, 'acceptWithExecpolicyAmendment')).toEqual(params.availableDecisions[1]);
    expect(decisionValue(params, 'decline')).toBe('decline');
  });
});

describe('the version gate', () => {
  it.each([
    ['codex-cli 0.171.0', true],
    ['codex-cli 0.169.0', true],
    ['codex-cli 1.0.0', true],
    ['codex-cli 0.168.9', false],
    ['codex-cli 0.153.0', false],
    ['', false],
  ])('%j → %s', (out, ok) => expect(appServerSupported(out)).toBe(ok));
});
