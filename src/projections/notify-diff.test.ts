import { describe, expect, it } from 'vitest';
import type { InboxEntry } from './inbox.js';
import { emptyNotifyState, notifyStep, waitsOf, type NotifyState } from './notify-diff.js';
import { inQuietHours } from './notify-quiet.js';
import type { ProjectList, ProjectRow } from './project-row.js';

const entry = (session: string, state: InboxEntry['state'], reason: string | null, waitsFor = reason ?? state): InboxEntry => ({
  session,
  title: `Task ${session}`,
  state,
  reason,
  waitsFor,
  since: '2026-03-01T10:00:00.000Z',
  goTo: 'terminal',
});
const project = (id: string, inbox: InboxEntry[] | undefined, online = true): ProjectRow =>
  ({ id, root: `/r/${id}`, name: `P${id}`, icon: null, cataloged: true, online, url: '', gate: 'admin', gated: false, ...(inbox ? { inbox } : {}) }) as ProjectRow;
const list = (...projects: ProjectRow[]): ProjectList => ({ projects });

const opts = { debounceMs: 1000, silenced: () => false };
/** Runs steps (list, time) from empty and returns every event as `type session`. */
function run(steps: [ProjectList, number][], o: Parameters<typeof notifyStep>[3] = opts, turnEnd = false): string[] {
  let state: NotifyState = emptyNotifyState;
  const out: string[] = [];
  for (const [l, at] of steps) {
    const r = notifyStep(state, waitsOf(l, { turnEnd }), at, o);
    state = r.state;
    out.push(...r.events.map((e) => `${e.type} ${e.session.id}`));
  }
  return out;
}

const waiting = list(project('a', [entry('s1', 'awaiting', 'permission')]));
const idle = list(project('a', []));

describe('notify diff: one notification per wait', () => {
  it.each<[string, [ProjectList, number][], string[]]>([
    ['a new wait is not told before the debounce', [[waiting, 0], [waiting, 999]], []],
    ['told once its debounce passed', [[waiting, 0], [waiting, 1000]], ['wait s1']],
    ['not repeated while it lasts', [[waiting, 0], [waiting, 1000], [waiting, 5000], [waiting, 9000]], ['wait s1']],
    ['withdrawn when answered', [[waiting, 0], [waiting, 1000], [idle, 2000]], ['wait s1', 'withdraw s1']],
    ['answered within the debounce: nothing at all', [[waiting, 0], [idle, 500], [idle, 5000]], []],
    ['a second wait after the first was answered is told again', [[waiting, 0], [waiting, 1000], [idle, 1100], [waiting, 1200], [waiting, 2200]], ['wait s1', 'withdraw s1', 'wait s1']],
    [
      'a new reason is a new wait: the old one withdrawn, the new told after its own debounce',
      [[waiting, 0], [waiting, 1000], [list(project('a', [entry('s1', 'awaiting', 'question')])), 1500], [list(project('a', [entry('s1', 'awaiting', 'question')])), 2500]],
      ['wait s1', 'withdraw s1', 'wait s1'],
    ],
    ['a project going offline neither withdraws nor re-tells its waits', [[waiting, 0], [waiting, 1000], [list(project('a', undefined, false)), 2000], [waiting, 3000]], ['wait s1']],
    ['quarantined is a wait', [[list(project('a', [entry('q', 'quarantined', 'stuck')])), 0], [list(project('a', [entry('q', 'quarantined', 'stuck')])), 1000]], ['wait q']],
    [
      'failed and finished-unread are in the inbox but are not waits',
      [[list(project('a', [entry('f', 'failed', 'tmux gone'), { ...entry('r', 'review', null, 'finished, unread'), goTo: 'review' }])), 0], [list(project('a', [entry('f', 'failed', 'tmux gone')])), 5000]],
      [],
    ],
    ['a turn end is not told unless opted in', [[list(project('a', [entry('t', 'awaiting', 'turn-end')])), 0], [list(project('a', [entry('t', 'awaiting', 'turn-end')])), 2000]], []],
  ])('%s', (_name, steps, events) => {
    expect(run(steps)).toEqual(events);
  });

  it('a turn end opted in is its own kind of event', () => {
    const l = list(project('a', [entry('t', 'awaiting', 'turn-end')]));
    expect(run([[l, 0], [l, 1000]], opts, true)).toEqual(['turn-end t']);
  });

  it('the event carries the project, the session title, what it waits for and the link to the session', () => {
    const r = notifyStep(emptyNotifyState, waitsOf(waiting, { turnEnd: false }), 0, { ...opts, debounceMs: 0 });
    expect(r.events).toEqual([
      { type: 'wait', id: 'a/s1/awaiting:permission', wait: 'a/s1/awaiting:permission@0', project: { id: 'a', name: 'Pa' }, session: { id: 's1', title: 'Task s1' }, waitsFor: 'permission', path: '/p/a/#/sessions/s1', since: '2026-03-01T10:00:00.000Z' },
    ]);
  });

  it('says when the earliest pending wait comes due', () => {
    const two = list(project('a', [entry('s1', 'awaiting', 'permission')]), project('b', [entry('s2', 'awaiting', 'auth')]));
    const first = notifyStep(emptyNotifyState, waitsOf(waiting, { turnEnd: false }), 0, opts);
    expect(first.due).toBe(1000);
    expect(notifyStep(first.state, waitsOf(two, { turnEnd: false }), 400, opts).due).toBe(1000);
  });

  it('a baseline (the first look after nobody listened) knows the waits already there without telling them; later ones are told', () => {
    const b = notifyStep(emptyNotifyState, waitsOf(waiting, { turnEnd: false }), 0, { ...opts, baseline: true });
    expect(b.events).toEqual([]);
    const two = list(project('a', [entry('s1', 'awaiting', 'permission'), entry('s2', 'awaiting', 'question')]));
    const later = notifyStep(b.state, waitsOf(two, { turnEnd: false }), 5000, opts);
    const due = notifyStep(later.state, waitsOf(two, { turnEnd: false }), 6000, opts);
    expect([...later.events, ...due.events].map((e) => `${e.type} ${e.session.id}`)).toEqual(['wait s2']);
    // The untold wait ending is no news either.
    expect(notifyStep(due.state, waitsOf(list(project('a', [entry('s2', 'awaiting', 'question')])), { turnEnd: false }), 7000, opts).events).toEqual([]);
  });

  it('each wait has a stable id of its own: the same in its wait and its withdraw, new for the next wait of the same key', () => {
    let n = 0;
    const o = { debounceMs: 0, silenced: () => false, mint: () => `w${++n}` };
    const ids: string[] = [];
    let state: NotifyState = emptyNotifyState;
    for (const [l, at] of [[waiting, 0], [waiting, 10], [idle, 20], [waiting, 30], [idle, 40]] as [ProjectList, number][]) {
      const r = notifyStep(state, waitsOf(l, { turnEnd: false }), at, o);
      state = r.state;
      ids.push(...r.events.map((e) => `${e.type} ${e.id} ${e.wait}`));
    }
    expect(ids).toEqual(['wait a/s1/awaiting:permission w1', 'withdraw a/s1/awaiting:permission w1', 'wait a/s1/awaiting:permission w2', 'withdraw a/s1/awaiting:permission w2']);
  });

  it('a silenced wait (muted project, quiet hours) is never told and never withdrawn', () => {
    const silenced = { debounceMs: 0, silenced: (w: { project: string }) => w.project === 'a' };
    expect(run([[waiting, 0], [waiting, 10], [idle, 20]], silenced)).toEqual([]);
  });
});

describe('quiet hours', () => {
  it.each<[string, string, number, number, boolean]>([
    ['22:00', '07:00', 23, 30, true],
    ['22:00', '07:00', 6, 59, true],
    ['22:00', '07:00', 7, 0, false],
    ['22:00', '07:00', 12, 0, false],
    ['12:00', '13:00', 12, 30, true],
    ['12:00', '13:00', 13, 0, false],
    ['09:00', '09:00', 9, 0, false],
  ])('%s–%s at %i:%i: %s', (from, to, h, m, quiet) => {
    expect(inQuietHours({ from, to }, h, m)).toBe(quiet);
  });
});
