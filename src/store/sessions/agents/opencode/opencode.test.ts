import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decideSession, isTrellisError, type SessionCommand } from '../../../../events/index.js';
import { evolveSession, initialSession, type SessionState } from '../../../../projections/session.js';
import { opencodeAdapter } from './opencode.js';
import { mapSignal } from '../signal.js';

/*
 * opencode 1.18.33's recorded event stream (test/agents/recordings/opencode-1.18.33-events.jsonl), every
 * line the watcher forwards replayed through the adapter and the session's decide/evolve, as
 * `trellis session signal` runs them: the state after each scenario, and at each wait, is asserted.
 */

const RECORDING = join(import.meta.dirname, '../../../../../test/agents/recordings/opencode-1.18.33-events.jsonl');
type Line = { scenario: string; type: string; properties: Record<string, unknown> };
const recorded = readFileSync(RECORDING, 'utf8').trim().split('\n').slice(1).map((l) => JSON.parse(l) as Line);
const SESSION = 'ses_df0622602ffehpS92WdGlxlL4K';

let tick = 0;
function apply(state: SessionState, command: object, source: SessionCommand['source']): SessionState {
  const full = { ...command, by: 'trellis', at: new Date(Date.UTC(2026, 10, 24) + ++tick).toISOString(), source } as SessionCommand;
  return decideSession(state, full).reduce(evolveSession, state);
}

function launched(task: string, agentSessionId?: string): SessionState {
  let s = apply(initialSession('s1'), { type: 'spawn', harness: 'opencode', task, nodes: [], issue: null, base: 'b'.repeat(40), branch: 'trellis/s1', worktree: '/w/s1' }, 'user');
  s = apply(s, { type: 'start' }, 'supervisor');
  s = apply(s, { type: 'launch', tmuxSession: 's1', pane: '%1', awaitsSignal: true }, 'supervisor');
  return agentSessionId ? apply(s, { type: 'identify', agentSessionId }, 'hook') : s;
}

function signal(state: SessionState, event: string, payload: unknown): SessionState {
  const mapped = mapSignal(opencodeAdapter, event, payload, state);
  if ('ignored' in mapped) throw new Error(mapped.ignored);
  for (const command of mapped.commands) {
    try {
      state = apply(state, command, 'hook');
    } catch (err) {
      if (!(isTrellisError(err) && err.code === 'SESSION_REFUSED')) throw err;
    }
  }
  return state;
}

/** Replays the recording's lines the adapter reads (as the watcher forwards them), noting the state after each. */
function replay(): { line: Line; state: SessionState }[] {
  let state = launched('Say hello');
  const after: { line: Line; state: SessionState }[] = [];
  for (const line of recorded) {
    if (!opencodeAdapter.events.includes(line.type)) continue;
    state = signal(state, line.type, line.properties);
    after.push({ line, state });
  }
  return after;
}

const pick = (s: SessionState) => ({ status: s.status, reason: s.reason, detail: s.detail, turnFailures: s.turnFailures });

describe('opencode 1.18.33, its recorded event stream', () => {
  const steps = replay();
  const last = (scenario: string) => steps.filter((s) => s.line.scenario === scenario).at(-1)!.state;

  it('each scenario ends as a person would say it', () => {
    expect(last('start').agentSessionId).toBe(SESSION);
    expect(pick(last('text turn'))).toEqual({ status: 'awaiting', reason: 'turn-end', detail: null, turnFailures: 0 });
    expect(pick(last('permission approved (reply once)'))).toMatchObject({ status: 'awaiting', reason: 'turn-end', detail: null });
    expect(pick(last('permission denied (reply reject)'))).toMatchObject({ status: 'awaiting', reason: 'turn-end', detail: null });
    expect(pick(last('provider refuses the key (401)'))).toEqual({
      status: 'awaiting',
      reason: 'auth',
      detail: "APIError 401: Incorrect API key provided (fix the provider's key in opencode's config or environment, then prompt it again)",
      turnFailures: 0,
    });
    expect(pick(last('provider refuses the request (400)'))).toEqual({ status: 'awaiting', reason: 'turn-end', detail: 'the turn failed: APIError 400: The fake model refuses this request', turnFailures: 1 });
    // An abort is the person's doing: the turn ends and did not fail, so the failures are no longer in a row.
    expect(pick(last('Esc Esc mid-turn (abort)'))).toEqual({ status: 'awaiting', reason: 'turn-end', detail: null, turnFailures: 0 });
    expect(steps.filter((s) => s.line.scenario === 'Esc Esc mid-turn (abort)').some((s) => s.state.failedTurn !== null)).toBe(false);
  });

  it('a permission asked is a wait naming what it runs; its reply is work again; a turn runs before it ends', () => {
    const asked = steps.filter((s) => s.line.type === 'permission.asked').map((s) => pick(s.state));
    expect(asked).toEqual([
      { status: 'awaiting', reason: 'permission', detail: 'bash: echo approved > approved.txt', turnFailures: 0 },
      { status: 'awaiting', reason: 'permission', detail: 'bash: echo denied > denied.txt', turnFailures: 0 },
    ]);
    expect(steps.filter((s) => s.line.type === 'permission.replied').map((s) => s.state.status)).toEqual(['running', 'running']);
    // Every busy status is `running`; no idle came while a permission waited.
    for (const s of steps.filter((x) => x.line.type === 'session.status' && (x.line.properties.status as { type: string }).type === 'busy')) expect(s.state.status).toBe('running');
  });

  it('a subagent’s turn (another session id) never speaks for the session, but its permission is a wait', () => {
    const s = launched('Say hello', SESSION);
    const busy = signal(s, 'session.status', { sessionID: SESSION, status: { type: 'busy' } });
    expect(busy.status).toBe('running');
    expect(signal(busy, 'session.created', { info: { id: 'ses_child', parentID: SESSION } }).agentSessionId).toBe(SESSION);
    expect(pick(signal(busy, 'session.idle', { sessionID: 'ses_child' }))).toMatchObject({ status: 'running' });
    expect(pick(signal(busy, 'session.error', { sessionID: 'ses_child', error: { name: 'APIError', data: { statusCode: 400, message: 'no' } } }))).toMatchObject({ status: 'running', turnFailures: 0 });
    const asked = signal(busy, 'permission.asked', { sessionID: 'ses_child', permission: 'bash', patterns: ['ls'] });
    expect(pick(asked)).toMatchObject({ status: 'awaiting', reason: 'permission', detail: 'bash: ls' });
    expect(asked.agentSessionId).toBe(SESSION);
    expect(signal(asked, 'permission.replied', { sessionID: 'ses_child', requestID: 'per_1', reply: 'once' }).status).toBe('running');
  });
});

describe('opencode before a spawn', () => {

  it('a missing opencode is refused naming its npm package', async () => {
    const { preflight } = await import('../preflight.js');
    await expect(preflight('opencode', { mainRoot: '/nowhere', env: { PATH: '/nonexistent' } })).rejects.toThrow(
      "the opencode harness runs 'opencode', which is not installed here (not on PATH): install it with 'npm install -g opencode-ai'",
    );
  });
});
