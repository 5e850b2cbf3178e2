import { describe, expect, it } from 'vitest';
import { foldThread, type ThreadState } from '../projections/thread.js';
import { decideThread } from './decide-thread.js';
import type { ErrorCode } from './errors.js';
import type { ThreadCommand } from './thread-commands.js';
import type { ThreadEvent } from './thread-events.js';

const at = '2026-03-01T10:00:00.000Z';
const by = 'ann';
const e = (clock: number, type: ThreadEvent['type'], data: object): ThreadEvent => ({ v: 1, type, at, by, clock, data }) as ThreadEvent;

const opened = e(1, 'opened', { concern: 'Login forgets email', body: 'b', nodes: ['auth/login'] });
const replied = (clock: number) => e(clock, 'replied', { body: 'plain', evidence: [] });
const remarked = (clock: number) => e(clock, 'remarked', { body: 'note', reading: 'r1', evidence: [] });

interface Case {
  name: string;
  given: ThreadEvent[];
  when: ThreadCommand;
  then: ThreadEvent[] | { code: ErrorCode };
}

const cmd = (c: object) => ({ by, at, eventId: 'ev1', ...c }) as ThreadCommand;

/**
 * The table's `then` reads in positions, as people type them; what is stored is format v2: each event
 * carries the command's id (`ev1`, then `ev1-1`, ...), and a reply is named by its event id.
 */
function stored(then: ThreadEvent[], state: ThreadState): ThreadEvent[] {
  return then.map((ev, i) => {
    const data = 'reply' in ev.data && typeof ev.data.reply === 'number' ? { reply: state.replyIds[ev.data.reply - 1] } : ev.data;
    return { ...ev, v: 2, id: i === 0 ? 'ev1' : `ev1-${i}`, data } as ThreadEvent;
  });
}

const cases: Case[] = [
  {
    name: 'open on nothing opens',
    given: [],
    when: cmd({ type: 'open', concern: 'Login forgets email', body: 'b', nodes: ['auth/login'] }),
    then: [opened],
  },
  {
    name: 'open with a scenario scope keeps the scope',
    given: [],
    when: cmd({ type: 'open', concern: 'c', body: '', nodes: [], scope: { scenario: 's1' } }),
    then: [e(1, 'opened', { concern: 'c', body: '', nodes: [], scope: { scenario: 's1' } })],
  },
  { name: 'open on an existing thread is refused', given: [opened], when: cmd({ type: 'open', concern: 'x', body: '', nodes: [] }), then: { code: 'THREAD_EXISTS' } },
  { name: 'reply to a missing thread is refused', given: [], when: cmd({ type: 'reply', body: 'hi', evidence: [] }), then: { code: 'THREAD_NOT_FOUND' } },
  { name: 'close of a missing thread is refused', given: [], when: cmd({ type: 'close' }), then: { code: 'THREAD_NOT_FOUND' } },
  {
    name: 'reply appends with the next clock',
    given: [opened, replied(2)],
    when: cmd({ type: 'reply', body: 'again', evidence: ['a'.repeat(64)] }),
    then: [e(3, 'replied', { body: 'again', evidence: ['a'.repeat(64)] })],
  },
  {
    name: 'reply to a landed thread is still a reply',
    given: [opened, e(2, 'closed', {})],
    when: cmd({ type: 'reply', body: 'after', evidence: [] }),
    then: [e(3, 'replied', { body: 'after', evidence: [] })],
  },
  {
    name: 'remark carries its reading',
    given: [opened],
    when: cmd({ type: 'remark', body: 'note', reading: 'r1', evidence: [] }),
    then: [remarked(2)],
  },
  { name: 'resolve a remark', given: [opened, remarked(2)], when: cmd({ type: 'resolve', reply: 1 }), then: [e(3, 'resolved', { reply: 1 })] },
  { name: 'resolve a resolved remark is already done', given: [opened, remarked(2), e(3, 'resolved', { reply: 1 })], when: cmd({ type: 'resolve', reply: 1 }), then: [] },
  {
    name: 'unresolve a resolved remark',
    given: [opened, remarked(2), e(3, 'resolved', { reply: 1 })],
    when: cmd({ type: 'unresolve', reply: 1 }),
    then: [e(4, 'unresolved', { reply: 1 })],
  },
  { name: 'unresolve an unresolved remark is already done', given: [opened, remarked(2)], when: cmd({ type: 'unresolve', reply: 1 }), then: [] },
  { name: 'resolve a plain reply is refused', given: [opened, replied(2)], when: cmd({ type: 'resolve', reply: 1 }), then: { code: 'NOT_A_REMARK' } },
  { name: 'resolve a reply that does not exist', given: [opened, remarked(2)], when: cmd({ type: 'resolve', reply: 2 }), then: { code: 'REPLY_NOT_FOUND' } },
  { name: 'resolve reply 0 does not exist', given: [opened, remarked(2)], when: cmd({ type: 'resolve', reply: 0 }), then: { code: 'REPLY_NOT_FOUND' } },
  {
    name: 'resolve a retracted remark is refused',
    given: [opened, remarked(2), e(3, 'retracted', { reply: 1 })],
    when: cmd({ type: 'resolve', reply: 1 }),
    then: { code: 'REPLY_RETRACTED' },
  },
  { name: 'retract a reply', given: [opened, replied(2)], when: cmd({ type: 'retract', reply: 1 }), then: [e(3, 'retracted', { reply: 1 })] },
  { name: 'retract twice is already done', given: [opened, replied(2), e(3, 'retracted', { reply: 1 })], when: cmd({ type: 'retract', reply: 1 }), then: [] },
  { name: 'retract a missing reply', given: [opened], when: cmd({ type: 'retract', reply: 1 }), then: { code: 'REPLY_NOT_FOUND' } },
  { name: 'close an open thread', given: [opened], when: cmd({ type: 'close' }), then: [e(2, 'closed', {})] },
  { name: 'close naming the session whose merged change closed it', given: [opened], when: cmd({ type: 'close', session: 'fix-1' }), then: [e(2, 'closed', { session: 'fix-1' })] },
  { name: 'close a landed thread is refused', given: [opened, e(2, 'closed', {})], when: cmd({ type: 'close' }), then: { code: 'THREAD_NOT_OPEN' } },
  {
    name: 'promote an open thread: permalink reply, then promoted',
    given: [opened],
    when: cmd({ type: 'promote', forgeId: 'github.com#7', url: 'https://github.com/o/r/issues/7' }),
    then: [
      e(2, 'replied', { body: 'Promoted to github.com#7: https://github.com/o/r/issues/7', evidence: [] }),
      e(3, 'promoted', { forgeId: 'github.com#7', url: 'https://github.com/o/r/issues/7' }),
    ],
  },
  {
    name: 'promote a landed thread is refused',
    given: [opened, e(2, 'closed', {})],
    when: cmd({ type: 'promote', forgeId: 'github.com#7', url: 'u' }),
    then: { code: 'THREAD_NOT_OPEN' },
  },
  {
    name: 'promote a promoted thread is refused',
    given: [opened, e(2, 'replied', { body: 'p', evidence: [] }), e(3, 'promoted', { forgeId: 'github.com#7', url: 'u' })],
    when: cmd({ type: 'promote', forgeId: 'github.com#8', url: 'u' }),
    then: { code: 'THREAD_NOT_OPEN' },
  },
  { name: 'promote a missing thread is refused', given: [], when: cmd({ type: 'promote', forgeId: 'g#1', url: 'u' }), then: { code: 'THREAD_NOT_FOUND' } },
  {
    name: 'edit writes only the fields that change',
    given: [opened],
    when: cmd({ type: 'edit', concern: 'Login forgets the email', body: 'b' }),
    then: [e(2, 'edited', { concern: 'Login forgets the email' })],
  },
  { name: 'an edit that changes nothing writes nothing', given: [opened], when: cmd({ type: 'edit', concern: 'Login forgets email', body: 'b' }), then: [] },
  { name: 'edit of a missing thread is refused', given: [], when: cmd({ type: 'edit', body: 'x' }), then: { code: 'THREAD_NOT_FOUND' } },
  { name: 'a landed thread can still be edited', given: [opened, e(2, 'closed', {})], when: cmd({ type: 'edit', body: 'later' }), then: [e(3, 'edited', { body: 'later' })] },
  {
    name: 'a promoted thread is edited on its forge',
    given: [opened, e(2, 'promoted', { forgeId: 'github.com#1', url: 'https://github.com/a/b/issues/1' })],
    when: cmd({ type: 'edit', body: 'x' }),
    then: { code: 'NOT_SUPPORTED' },
  },
  { name: 'reopen of a landed thread opens it', given: [opened, e(2, 'closed', {})], when: cmd({ type: 'reopen' }), then: [e(3, 'reopened', {})] },
  { name: 'reopen of an open thread writes nothing', given: [opened], when: cmd({ type: 'reopen' }), then: [] },
  { name: 'reopen of a missing thread is refused', given: [], when: cmd({ type: 'reopen' }), then: { code: 'THREAD_NOT_FOUND' } },
  {
    name: 'a promoted thread is not reopened here',
    given: [opened, e(2, 'promoted', { forgeId: 'github.com#1', url: 'https://github.com/a/b/issues/1' })],
    when: cmd({ type: 'reopen' }),
    then: { code: 'NOT_SUPPORTED' },
  },
];

describe('decideThread: given events, when command, then events', () => {
  it.each(cases)('$name', ({ given, when, then }) => {
    const state = foldThread('t1', given);
    if (Array.isArray(then)) expect(decideThread(state, when)).toEqual(stored(then, state));
    else expect(() => decideThread(state, when)).toThrow(expect.objectContaining({ code: then.code }));
  });

  it('every decided event folds: the new state has exactly the new clock', () => {
    for (const { given, when, then } of cases) {
      if (!Array.isArray(then) || then.length === 0) continue;
      const after = foldThread('t1', [...given, ...decideThread(foldThread('t1', given), when)]);
      expect(after.clock).toBe(then.at(-1)!.clock);
    }
  });
});

describe('evolve: edit and reopen', () => {
  it('an edit replaces the concern and body and says who edited when; a reopen makes a landed thread open', () => {
    const later = '2026-03-02T09:00:00.000Z';
    const edited = { ...e(2, 'edited', { body: 'new body' }), by: 'bob', at: later } as ThreadEvent;
    const state = foldThread('t1', [opened, edited, e(3, 'closed', {}), e(4, 'reopened', {})]);
    expect(state).toMatchObject({ concern: 'Login forgets email', body: 'new body', status: 'open', edited: { at: later, by: 'bob' } });
    expect(foldThread('t1', [opened]).edited).toBeUndefined();
  });
});

describe('format v2: replies named by id', () => {
  const v2 = (id: string, clock: number, type: ThreadEvent['type'], data: object, when = at): ThreadEvent => ({ v: 2, id, type, at: when, by, clock, data }) as ThreadEvent;

  it('a v1 reply gets the id v1-<clock>; resolve by position stores that id', () => {
    const state = foldThread('t1', [opened, replied(2), remarked(3)]);
    expect(state.replyIds).toEqual(['v1-2', 'v1-3']);
    expect(decideThread(state, cmd({ type: 'resolve', reply: 2 }))).toEqual([v2('ev1', 4, 'resolved', { reply: 'v1-3' })]);
  });

  it('a v2 resolve names its reply by id, wherever a merge put that reply', () => {
    // Two clones replied at clock 2; the remark of clone B sorts after the reply of clone A by `at`.
    const a = v2('aaaa', 2, 'replied', { body: 'from A', evidence: [] }, '2026-03-01T10:00:01.000Z');
    const b = v2('bbbb', 2, 'remarked', { body: 'from B', reading: 'r', evidence: [] }, '2026-03-01T10:00:02.000Z');
    const resolve = v2('cccc', 3, 'resolved', { reply: 'bbbb' });
    const forward = foldThread('t1', [opened, a, b, resolve]);
    const backward = foldThread('t1', [resolve, b, a, opened]);
    expect(backward).toEqual(forward);
    expect(forward.replies.map((r) => [r.body, r.resolved])).toEqual([
      ['from A', undefined],
      ['from B', true],
    ]);
    expect(forward.clock).toBe(3);
    // The next event continues from the largest clock of both sides.
    expect(decideThread(forward, cmd({ type: 'reply', body: 'x', evidence: [] }))[0]!.clock).toBe(4);
  });

  it('without an id from the caller, ids come from the content: stable, and distinct for distinct events', () => {
    const state = foldThread('t1', [opened]);
    const one = decideThread(state, { by, at, type: 'reply', body: 'a', evidence: [] });
    const again = decideThread(state, { by, at, type: 'reply', body: 'a', evidence: [] });
    const other = decideThread(state, { by, at, type: 'reply', body: 'b', evidence: [] });
    expect(one[0]!.id).toMatch(/^h[0-9a-z]{12}$/);
    expect(again[0]!.id).toBe(one[0]!.id);
    expect(other[0]!.id).not.toBe(one[0]!.id);
  });
});
