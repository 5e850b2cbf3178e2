import { describe, expect, it } from 'vitest';
import { evolveSession, foldSession, initialSession } from '../projections/session.js';
import { sessionList } from '../projections/session-list.js';
import { decideSession } from './decide-session.js';
import type { ErrorCode } from './errors.js';
import type { SessionCommand } from './session-commands.js';
import { parseSessionEvent, type SessionEvent } from './session-events.js';

const at = '2026-03-01T10:00:00.000Z';
const by = 'ann';
const e = (clock: number, type: SessionEvent['type'], data: object, source: SessionEvent['source'] = 'user'): SessionEvent =>
  ({ v: 1, type, at, by, clock, source, data }) as SessionEvent;

const spawnData = { harness: 'shell', task: 'Fix the login\nsecond line', nodes: ['auth/login'], issue: null, base: 'b'.repeat(40), branch: 'trellis/s1', worktree: '/w/s1' };
const spawned = e(1, 'spawned', spawnData);
/** A log that leads to each status, with the next free clock. */
const histories = {
  queued: [spawned],
  starting: [spawned, e(2, 'starting', {}, 'supervisor')],
  running: [spawned, e(2, 'starting', {}, 'supervisor'), e(3, 'launched', { tmuxSession: 's1', pane: '%1' }, 'supervisor')],
  'awaiting{turn-end}': [spawned, e(2, 'starting', {}), e(3, 'launched', { tmuxSession: 's1', pane: '%1' }), e(4, 'awaiting', { reason: 'turn-end' }, 'hook')],
  'awaiting{permission}': [spawned, e(2, 'starting', {}), e(3, 'launched', { tmuxSession: 's1', pane: '%1' }), e(4, 'awaiting', { reason: 'permission' }, 'hook')],
  'awaiting{setup}': [spawned, e(2, 'starting', {}), e(3, 'launched', { tmuxSession: 's1', pane: '%1', awaitsSignal: true }), e(4, 'awaiting', { reason: 'setup', detail: 'workspace trust' }, 'pane')],
  review: [spawned, e(2, 'starting', {}), e(3, 'launched', { tmuxSession: 's1', pane: '%1' }), e(4, 'review-requested', {})],
  merging: [spawned, e(2, 'starting', {}), e(3, 'launched', { tmuxSession: 's1', pane: '%1' }), e(4, 'review-requested', {}), e(5, 'merge-dispatched', {})],
  'interrupted{by-user}': [spawned, e(2, 'starting', {}), e(3, 'launched', { tmuxSession: 's1', pane: '%1' }), e(4, 'interrupted', { reason: 'by-user' })],
  'quarantined{stuck}': [spawned, e(2, 'starting', {}), e(3, 'launched', { tmuxSession: 's1', pane: '%1' }), e(4, 'quarantined', { reason: 'stuck', wip: null })],
  'failed{no tmux}': [spawned, e(2, 'starting', {}), e(3, 'failed', { reason: 'no tmux' }, 'supervisor')],
  closed: [spawned, e(2, 'starting', {}), e(3, 'launched', { tmuxSession: 's1', pane: '%1' }), e(4, 'closed', { wip: null })],
} satisfies Record<string, SessionEvent[]>;
type Given = keyof typeof histories;
const GIVENS = Object.keys(histories) as Given[];

const cmd = (c: object, source: SessionEvent['source'] = 'user') => ({ by, at, source, ...c }) as SessionCommand;

/** What a command does in each status: the event types it appends, or the refusal's code. Every cell is listed. */
type Outcome = readonly SessionEvent['type'][] | ErrorCode;
const table: { when: SessionCommand; then: Record<Given, Outcome> }[] = [
  {
    when: cmd({ type: 'start' }, 'supervisor'),
    then: row([['queued', 'awaiting{setup}'], ['starting']], 'SESSION_REFUSED'),
  },
  {
    when: cmd({ type: 'launch', tmuxSession: 's1', pane: '%2' }, 'supervisor'),
    then: row(['starting', ['launched']], 'SESSION_REFUSED'),
  },
  {
    when: cmd({ type: 'fail', reason: 'tmux missing' }, 'supervisor'),
    then: row([['queued', 'starting'], ['failed']], 'SESSION_REFUSED'),
  },
  {
    when: cmd({ type: 'identify', agentSessionId: 'agent-1' }, 'hook'),
    then: row(['closed', 'SESSION_REFUSED'], [['starting', 'awaiting{setup}'], ['identified', 'running']], ['identified']),
  },
  {
    when: cmd({ type: 'prompt', body: 'go on' }),
    // Typed only where the agent takes a prompt; anywhere else it is held on the timeline (one event).
    then: row([['closed', 'quarantined{stuck}', 'failed{no tmux}'], 'PROMPT_REFUSED'], ['awaiting{turn-end}', ['prompted', 'running']], ['prompted']),
  },
  {
    // Nothing held: nothing to deliver.
    when: cmd({ type: 'deliver' }, 'supervisor'),
    then: row([]),
  },
  {
    // A setup dialog read from the pane: only before the agent's first signal, and once per dialog.
    when: cmd({ type: 'await', reason: 'setup', detail: 'workspace trust' }, 'pane'),
    then: row(['starting', ['awaiting']], []),
  },
  {
    when: cmd({ type: 'await', reason: 'setup', detail: 'API key confirmation' }, 'pane'),
    then: row([['starting', 'awaiting{setup}'], ['awaiting']], []),
  },
  {
    // A Stop ends any wait; review and merging follow the agent without changing status.
    when: cmd({ type: 'await', reason: 'turn-end' }, 'hook'),
    then: row([['starting', 'running', 'awaiting{permission}', 'awaiting{setup}', 'review', 'merging'], ['awaiting']], ['awaiting{turn-end}', []], 'SESSION_REFUSED'),
  },
  {
    when: cmd({ type: 'await', reason: 'permission' }, 'hook'),
    then: row([['starting', 'running', 'awaiting{turn-end}', 'awaiting{setup}', 'review', 'merging'], ['awaiting']], ['awaiting{permission}', []], 'SESSION_REFUSED'),
  },
  {
    when: cmd({ type: 'await', reason: 'auth', detail: 'authentication_failed: Not logged in' }, 'hook'),
    then: row([['starting', 'running', 'awaiting{turn-end}', 'awaiting{permission}', 'awaiting{setup}', 'review', 'merging'], ['awaiting']], [['interrupted{by-user}', 'quarantined{stuck}', 'failed{no tmux}', 'closed', 'queued'], 'SESSION_REFUSED'], []),
  },
  {
    // The idle notice ends a turn the session still thought ran; it never ends another wait, and never refuses.
    when: cmd({ type: 'idle' }, 'hook'),
    then: row([['starting', 'running', 'review', 'merging'], ['awaiting']], []),
  },
  {
    when: cmd({ type: 'busy' }, 'hook'),
    then: row([['starting', 'awaiting{turn-end}', 'awaiting{permission}', 'awaiting{setup}'], ['running']], [['running', 'review', 'merging'], []], 'SESSION_REFUSED'),
  },
  {
    // A person's answer left the wait only while the session still shows it: the agent's Stop (or its next
    // wait) that landed first is the later fact, never undone into running.
    when: cmd({ type: 'busy', left: 'permission' }, 'user'),
    then: row([['awaiting{permission}'], ['running']], []),
  },
  {
    when: cmd({ type: 'interrupt', reason: 'by-user' }),
    then: row([['starting', 'running', 'awaiting{turn-end}', 'awaiting{permission}', 'awaiting{setup}', 'review', 'merging'], ['interrupted']], 'SESSION_REFUSED'),
  },
  {
    when: cmd({ type: 'resume' }),
    then: row([['interrupted{by-user}', 'quarantined{stuck}'], ['resumed']], 'SESSION_REFUSED'),
  },
  {
    when: cmd({ type: 'review' }),
    then: row([['running', 'awaiting{turn-end}', 'awaiting{permission}', 'awaiting{setup}'], ['review-requested']], 'SESSION_REFUSED'),
  },
  {
    when: cmd({ type: 'merge' }),
    then: row(['review', ['merge-dispatched']], 'SESSION_REFUSED'),
  },
  {
    // The merge gate's override is logged only where a merge can follow.
    when: cmd({ type: 'override-merge', reason: 'flaky on trunk', scenarios: ['a/b'] }),
    then: row(['review', ['merge-overridden']], 'SESSION_REFUSED'),
  },
  {
    // A changed check's new definition is accepted while the session can still be merged or resumed.
    when: cmd({ type: 'accept-check', reason: 'the old check read the wrong file', scenarios: [{ id: 'a/b', node: 'a', run: 'true', timeoutS: 600 }] }),
    then: row([['starting', 'running', 'awaiting{turn-end}', 'awaiting{permission}', 'awaiting{setup}', 'review', 'merging', 'interrupted{by-user}'], ['check-accepted']], 'SESSION_REFUSED'),
  },
  {
    when: cmd({ type: 'close', wip: null }),
    then: row(['closed', 'SESSION_REFUSED'], ['closed']),
  },
  {
    when: cmd({ type: 'quarantine', reason: 'stuck', wip: null }),
    then: row([['closed', 'quarantined{stuck}'], 'SESSION_REFUSED'], ['quarantined']),
  },
  {
    when: cmd({ type: 'turn-fail', reason: 'api error' }, 'supervisor'),
    then: row([['starting', 'running', 'awaiting{turn-end}', 'awaiting{permission}', 'awaiting{setup}', 'merging'], ['turn-failed']], 'SESSION_REFUSED'),
  },
  {
    // Only unread sessions have anything to clear.
    when: cmd({ type: 'view' }),
    then: row([['awaiting{turn-end}', 'awaiting{permission}', 'awaiting{setup}', 'review', 'merging', 'quarantined{stuck}', 'failed{no tmux}'], ['viewed']], []),
  },
];

/** A row of the table: the listed cells, and `rest` for every status not listed. */
function row(...cells: [...([Given | Given[], Outcome])[], Outcome]): Record<Given, Outcome> {
  const rest = cells.pop() as Outcome;
  const out = Object.fromEntries(GIVENS.map((g) => [g, rest])) as Record<Given, Outcome>;
  for (const [givens, outcome] of cells as [Given | Given[], Outcome][]) for (const g of [givens].flat()) out[g] = outcome;
  return out;
}

describe('decideSession: given a status, when a command, then events or a refusal naming the status', () => {
  const cases = table.flatMap(({ when, then }) => GIVENS.map((given) => ({ given, when, then: then[given] })));
  it.each(cases)('$given + $when.type -> $then', ({ given, when, then }) => {
    const history = histories[given];
    const state = foldSession('s1', history);
    if (typeof then === 'string') {
      let caught: unknown;
      try {
        decideSession(state, when);
      } catch (err) {
        caught = err;
      }
      expect(caught, `${given} + ${when.type} should be refused`).toMatchObject({ code: then });
      expect((caught as Error).message).toContain(given);
      return;
    }
    const events = decideSession(state, when);
    expect(events.map((ev) => ev.type)).toEqual(then);
    events.forEach((ev, i) => {
      expect(ev).toMatchObject({ v: 1, at, by, clock: history.length + 1 + i, source: when.source });
      expect(parseSessionEvent(JSON.stringify(ev))).toEqual({ ok: true, event: ev });
    });
  });

  it('spawn on nothing spawns with every field; spawn of an existing id and commands on nothing are refused', () => {
    expect(decideSession(initialSession('s1'), cmd({ type: 'spawn', ...spawnData }))).toEqual([spawned]);
    expect(() => decideSession(foldSession('s1', [spawned]), cmd({ type: 'spawn', ...spawnData }))).toThrow(expect.objectContaining({ code: 'SESSION_EXISTS' }));
    for (const { when } of table) expect(() => decideSession(initialSession('s1'), when)).toThrow(expect.objectContaining({ code: 'SESSION_NOT_FOUND' }));
  });

  it('an agent that signals its own start is starting until it does; a setup dialog on its screen is awaiting{setup}, named', () => {
    const launched = foldSession('s1', [spawned, e(2, 'starting', {}, 'supervisor'), e(3, 'launched', { tmuxSession: 's1', pane: '%1', awaitsSignal: true }, 'supervisor')]);
    expect(launched).toMatchObject({ status: 'starting', tmux: { pane: '%1' } });
    // A shell cannot signal: launched is running, as before (and as every log written before awaitsSignal).
    expect(foldSession('s1', histories.running)).toMatchObject({ status: 'running' });
    const apply = (state: ReturnType<typeof foldSession>, c: SessionCommand) => decideSession(state, c).reduce(evolveSession, state);
    const dialog = apply(launched, cmd({ type: 'await', reason: 'setup', detail: 'workspace trust ("Yes, I trust this folder")' }, 'pane'));
    expect(dialog).toMatchObject({ status: 'awaiting', reason: 'setup', detail: 'workspace trust ("Yes, I trust this folder")', source: 'pane' });
    expect(sessionList([dialog])[0]).toMatchObject({ reason: 'setup', detail: 'workspace trust ("Yes, I trust this folder")' });
    // The dialog answered and gone before any signal: starting again; the agent's own start signal: running.
    expect(apply(dialog, cmd({ type: 'start' }, 'pane'))).toMatchObject({ status: 'starting', detail: null, source: 'pane' });
    const up = apply(dialog, cmd({ type: 'identify', agentSessionId: 'agent-1' }, 'hook'));
    expect(up).toMatchObject({ status: 'running', detail: null, agentSessionId: 'agent-1', source: 'hook' });
    // A late reading of the pane changes nothing once the agent has signalled.
    expect(decideSession(up, cmd({ type: 'await', reason: 'setup', detail: 'workspace trust' }, 'pane'))).toEqual([]);
  });

  it('a launch logged after the agent’s first hooks records the pane and keeps their state', () => {
    const early = foldSession('s1', [spawned, e(2, 'starting', {}, 'supervisor'), e(3, 'awaiting', { reason: 'turn-end' }, 'hook')]);
    const events = decideSession(early, cmd({ type: 'launch', tmuxSession: 's1', pane: '%2' }, 'supervisor'));
    expect(events.map((ev) => ev.type)).toEqual(['launched']);
    expect(events.reduce(evolveSession, early)).toMatchObject({ status: 'awaiting', reason: 'turn-end', tmux: { session: 's1', pane: '%2' } });
  });

  it('a repeated identify with the same agent session id changes nothing', () => {
    const state = foldSession('s1', [...histories.running, e(4, 'identified', { agentSessionId: 'agent-1' }, 'hook')]);
    expect(decideSession(state, cmd({ type: 'identify', agentSessionId: 'agent-1' }, 'hook'))).toEqual([]);
  });
});

describe('input only where the agent reads input (DESIGN.md §9, issue 18 item 3)', () => {
  const apply = (state: ReturnType<typeof foldSession>, c: SessionCommand) => decideSession(state, c).reduce(evolveSession, state);

  it('a prompt during a dialog, before the start or mid-turn is held; the next wait for input delivers the held prompts in order', () => {
    for (const given of ['awaiting{permission}', 'starting', 'running', 'interrupted{by-user}'] as const) {
      const held = apply(foldSession('s1', histories[given]), cmd({ type: 'prompt', body: 'go on' }));
      expect(held.status, given).toBe(foldSession('s1', histories[given]).status);
      expect(held.timeline, given).toEqual([{ by, at, body: 'go on', held: expect.stringContaining('delivered when the agent next waits for input') }]);
      expect(held.pending, given).toEqual([0]);
      expect(decideSession(held, cmd({ type: 'deliver' }, 'supervisor')), given).toEqual([]);
    }
    let s = apply(foldSession('s1', histories['awaiting{permission}']), cmd({ type: 'prompt', body: 'one' }));
    expect(s.timeline[0]!.held).toMatch(/^the agent shows a permission dialog/);
    s = apply(s, cmd({ type: 'prompt', body: 'two' }));
    // A newer prompt waits behind the held one even once the agent takes input.
    expect(s.timeline[1]!.held).toMatch(/earlier prompts/);
    s = apply(s, cmd({ type: 'await', reason: 'turn-end' }, 'hook'));
    expect(apply(s, cmd({ type: 'prompt', body: 'three' })).pending).toEqual([0, 1, 2]);
    const first = decideSession(s, cmd({ type: 'deliver' }, 'supervisor'));
    expect(first.map((ev) => [ev.type, ev.data])).toEqual([['delivered', { index: 0 }], ['running', {}]]);
    s = first.reduce(evolveSession, s);
    expect(s).toMatchObject({ status: 'running', pending: [1], timeline: [{ by, at, body: 'one' }, { body: 'two', held: expect.any(String) }] });
    expect(s.timeline[0]).not.toHaveProperty('held');
    // Mid-turn it waits again (Claude Code is not shown to queue typed input); a shell would take it.
    expect(decideSession(s, cmd({ type: 'deliver' }, 'supervisor'))).toEqual([]);
    expect(decideSession(s, cmd({ type: 'deliver', queuesInput: true }, 'supervisor')).map((ev) => ev.type)).toEqual(['delivered']);
  });

  it('a running agent that queues typed input (a shell) takes a prompt at once; review follows the agent’s own wait', () => {
    expect(decideSession(foldSession('s1', histories.running), cmd({ type: 'prompt', body: 'ls', queuesInput: true }))).toMatchObject([{ type: 'prompted', data: { body: 'ls' } }]);
    // Put up for review while at its prompt: a prompt (the merge's) is typed and the agent works again, still in review.
    const idleReview = foldSession('s1', [...histories['awaiting{turn-end}'], e(5, 'review-requested', {})]);
    const typed = apply(idleReview, cmd({ type: 'prompt', body: 'merge' }));
    expect(typed).toMatchObject({ status: 'review', waiting: null, pending: [] });
    // Put up for review mid-turn: held until the agent's Stop, which review records without leaving review.
    const busyReview = foldSession('s1', histories.review);
    const held = apply(busyReview, cmd({ type: 'prompt', body: 'merge' }));
    expect(held).toMatchObject({ status: 'review', pending: [0] });
    const stopped = apply(held, cmd({ type: 'await', reason: 'turn-end' }, 'hook'));
    expect(stopped).toMatchObject({ status: 'review', waiting: 'turn-end', pending: [0] });
    expect(apply(stopped, cmd({ type: 'deliver' }, 'supervisor'))).toMatchObject({ status: 'review', waiting: null, pending: [] });
  });
});

describe('evolveSession', () => {
  it('folds status, sub-reason, source, unread, timeline and runtime facts', () => {
    const s = foldSession('s1', [
      ...histories.running,
      e(4, 'identified', { agentSessionId: 'agent-1' }, 'hook'),
      e(5, 'prompted', { body: 'first' }),
      e(6, 'awaiting', { reason: 'permission' }, 'hook'),
    ]);
    expect(s).toMatchObject({
      status: 'awaiting',
      reason: 'permission',
      source: 'hook',
      unread: true,
      title: 'Fix the login',
      tmux: { session: 's1', pane: '%1' },
      agentSessionId: 'agent-1',
      timeline: [{ by, at, body: 'first' }],
    });
    const after = foldSession('s1', [...histories.running, e(4, 'awaiting', { reason: 'turn-end' }, 'hook'), e(5, 'viewed', {}), e(6, 'closed', { wip: 'c'.repeat(40) })]);
    expect(after).toMatchObject({ status: 'closed', reason: null, unread: false, tmux: null, wip: 'c'.repeat(40) });
  });

  it('applied twice is idempotent: a replayed event changes nothing', () => {
    for (const given of GIVENS) {
      const log = histories[given];
      const once = foldSession('s1', log);
      expect(log.reduce(evolveSession, once)).toEqual(once);
      expect([...log, ...log].reduce(evolveSession, initialSession('s1'))).toEqual(once);
    }
  });

  it('turn failures count up; the wait after a failed turn keeps the count; a new turn that ends well clears it', () => {
    const failing = [...histories.running, e(4, 'turn-failed', { reason: 'x' }, 'hook'), e(5, 'turn-failed', { reason: 'server_error: API Error' }, 'hook')];
    expect(foldSession('s1', failing)).toMatchObject({ turnFailures: 2, failedTurn: 'server_error: API Error' });
    const waiting = [...failing, e(6, 'awaiting', { reason: 'turn-end', detail: 'the turn failed: server_error' }, 'hook')];
    expect(foldSession('s1', waiting)).toMatchObject({ status: 'awaiting', reason: 'turn-end', detail: 'the turn failed: server_error', turnFailures: 2 });
    const next = [...waiting, e(7, 'running', {}, 'hook')];
    expect(foldSession('s1', next)).toMatchObject({ turnFailures: 2, failedTurn: null, detail: null });
    expect(foldSession('s1', [...next, e(8, 'awaiting', { reason: 'turn-end' }, 'hook')]).turnFailures).toBe(0);
  });
});

describe('session list and parser', () => {
  it('lists most recently active first with the board fields', () => {
    const a = foldSession('a', [{ ...spawned, at: '2026-03-01T10:00:00.000Z' }]);
    const b = foldSession('b', [{ ...spawned, at: '2026-03-01T11:00:00.000Z' }]);
    const list = sessionList([a, b]);
    expect(list.map((s) => s.id)).toEqual(['b', 'a']);
    expect(list[0]).toEqual({
      id: 'b',
      title: 'Fix the login',
      harness: 'shell',
      state: 'queued',
      reason: null,
      detail: null,
      source: 'user',
      unread: false,
      nodes: ['auth/login'],
      issue: null,
      branch: 'trellis/s1',
      updatedAt: '2026-03-01T11:00:00.000Z',
    });
  });

  it('refuses what is not a session event, saying why', () => {
    expect(parseSessionEvent('nope')).toMatchObject({ ok: false, reason: expect.stringContaining('not JSON') });
    expect(parseSessionEvent(JSON.stringify({ ...spawned, v: 2 }))).toMatchObject({ ok: false, reason: expect.stringContaining('upgrade trellis') });
    expect(parseSessionEvent(JSON.stringify({ ...spawned, source: 'cron' }))).toMatchObject({ ok: false, reason: expect.stringContaining('source') });
    expect(parseSessionEvent(JSON.stringify(e(2, 'awaiting', { reason: 'bored' })))).toMatchObject({ ok: false, reason: expect.stringContaining('data.reason') });
    expect(parseSessionEvent(JSON.stringify({ ...spawned, type: 'exploded' }))).toMatchObject({ ok: false, reason: expect.stringContaining('unknown type') });
  });
});

describe('merge-gate overrides', () => {
  it('given a session in review, when the gate is overridden, then the event names who, why and which scenarios, the fold lists it, and its subject is the audit', () => {
    const [event] = decideSession(foldSession('s1', histories.review), cmd({ type: 'override-merge', reason: '  flaky on trunk ', scenarios: ['a/b', 'c/d'] }));
    expect(event).toMatchObject({ type: 'merge-overridden', by, data: { reason: 'flaky on trunk', scenarios: ['a/b', 'c/d'] } });
    expect(parseSessionEvent(JSON.stringify(event))).toEqual({ ok: true, event });
    const state = foldSession('s1', [...histories.review, event!]);
    expect(state.mergeOverrides).toEqual([{ by, at, reason: 'flaky on trunk', scenarios: ['a/b', 'c/d'] }]);
    // Apply twice: a replayed event changes nothing.
    expect(evolveSession(state, event!)).toBe(state);
    expect(() => decideSession(foldSession('s1', histories.review), cmd({ type: 'override-merge', reason: ' ', scenarios: ['a/b'] }))).toThrow(/needs a reason/);
  });
});
