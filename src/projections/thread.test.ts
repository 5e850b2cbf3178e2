import { describe, expect, it } from 'vitest';
import type { ThreadEvent } from '../events/index.js';
import { evolveThread, foldThread, initialThread, threadIssue, threadTimeline, type ThreadState } from './thread.js';

const at = (m: number) => `2026-03-01T10:${String(m).padStart(2, '0')}:00.000Z`;
const e = (clock: number, type: ThreadEvent['type'], data: object, by = 'ann'): ThreadEvent => ({ v: 1, type, at: at(clock), by, clock, data }) as ThreadEvent;
const H1 = 'a'.repeat(64);
const H2 = 'b'.repeat(64);

const opened = e(1, 'opened', { concern: 'C', body: 'B', nodes: ['n1'] });

interface FoldCase {
  name: string;
  given: ThreadEvent[];
  then: Partial<ThreadState>;
}

const cases: FoldCase[] = [
  { name: 'nothing: absent', given: [], then: { status: 'absent', clock: 0, replies: [] } },
  {
    name: 'opened: open, with author, creation and nodes',
    given: [opened],
    then: { status: 'open', concern: 'C', body: 'B', by: 'ann', created: at(1), nodes: ['n1'], clock: 1, updated: at(1) },
  },
  {
    name: 'replied: a plain reply, evidence collected',
    given: [opened, e(2, 'replied', { body: 'r', evidence: [H1] }, 'bob')],
    then: { replies: [{ by: 'bob', at: at(2), body: 'r' }], carried: [[H1]], evidence: [H1], updated: at(2) },
  },
  {
    name: 'which reply carried which evidence is kept beside the replies (a reply without any carried none), the thread has all of it',
    given: [opened, e(2, 'replied', { body: 'first', evidence: [H1, H1] }), e(3, 'replied', { body: 'second', evidence: [] }), e(4, 'remarked', { body: 'm', reading: 'x', evidence: [H2] })],
    then: {
      replies: [
        { by: 'ann', at: at(2), body: 'first' },
        { by: 'ann', at: at(3), body: 'second' },
        { by: 'ann', at: at(4), body: 'm', resolved: false, reading: 'x' },
      ],
      carried: [[H1], [], [H2]],
      evidence: [H1, H2],
    },
  },
  {
    name: 'opened, edited, closed, reopened and promoted are the timeline, with who and when; replies are not in it',
    given: [opened, e(2, 'replied', { body: 'r', evidence: [] }, 'bob'), e(3, 'edited', { body: 'B2' }, 'cy'), e(4, 'closed', {}, 'bob'), e(5, 'reopened', {}, 'ann'), e(6, 'promoted', { forgeId: 'github.com#3', url: 'https://x/3' }, 'dee')],
    then: {
      events: [
        { type: 'opened', by: 'ann', at: at(1) },
        { type: 'edited', by: 'cy', at: at(3) },
        { type: 'closed', by: 'bob', at: at(4) },
        { type: 'reopened', by: 'ann', at: at(5) },
        { type: 'promoted', by: 'dee', at: at(6) },
      ],
    },
  },
  {
    name: 'evidence is deduped across replies and within one',
    given: [opened, e(2, 'replied', { body: 'r', evidence: [H1, H1] }), e(3, 'remarked', { body: 'm', reading: 'x', evidence: [H2, H1] })],
    then: { evidence: [H1, H2], carried: [[H1], [H2, H1]], replies: [{ by: 'ann', at: at(2), body: 'r' }, { by: 'ann', at: at(3), body: 'm', resolved: false, reading: 'x' }] },
  },
  {
    name: 'remarked: a reply with resolved=false and its reading',
    given: [opened, e(2, 'remarked', { body: 'm', reading: 'rd', evidence: [] })],
    then: { replies: [{ by: 'ann', at: at(2), body: 'm', resolved: false, reading: 'rd' }] },
  },
  {
    name: 'resolved then unresolved flips the bit',
    given: [opened, e(2, 'remarked', { body: 'm', reading: 'rd', evidence: [] }), e(3, 'resolved', { reply: 1 }), e(4, 'unresolved', { reply: 1 })],
    then: { replies: [{ by: 'ann', at: at(2), body: 'm', resolved: false, reading: 'rd' }], clock: 4 },
  },
  {
    name: 'retracted marks the reply and keeps its place',
    given: [opened, e(2, 'replied', { body: 'a', evidence: [] }), e(3, 'replied', { body: 'b', evidence: [] }), e(4, 'retracted', { reply: 1 })],
    then: { replies: [{ by: 'ann', at: at(2), body: 'a', retracted: true }, { by: 'ann', at: at(3), body: 'b' }] },
  },
  { name: 'closed: landed', given: [opened, e(2, 'closed', {})], then: { status: 'landed' } },
  {
    name: "closed naming a session: its timeline entry carries the session whose merged change closed it",
    given: [opened, e(2, 'closed', { session: 'fix-1' }, 'bob')],
    then: { status: 'landed', events: [{ type: 'opened', by: 'ann', at: at(1) }, { type: 'closed', by: 'bob', at: at(2), session: 'fix-1' }] },
  },
  {
    name: 'promoted: landed with the permalink as url',
    given: [opened, e(2, 'promoted', { forgeId: 'github.com#3', url: 'https://x/3' })],
    then: { status: 'landed', url: 'https://x/3' },
  },
  {
    name: 'an eval-remark thread keeps its scope',
    given: [e(1, 'opened', { concern: 'C', body: '', nodes: [], scope: { scenario: 's1' } })],
    then: { status: 'open', scope: { scenario: 's1' } },
  },
  {
    name: 'a reference to a reply that does not exist has no effect',
    given: [opened, e(2, 'resolved', { reply: 4 })],
    then: { replies: [], clock: 2 },
  },
];

describe('thread fold: given events, then state', () => {
  it.each(cases)('$name', ({ given, then }) => {
    expect(foldThread('t1', given)).toMatchObject(then);
  });

  it.each(cases)('apply twice: $name', ({ given }) => {
    const once = foldThread('t1', given);
    expect(given.reduce(evolveThread, once)).toEqual(once);
    expect(foldThread('t1', given.flatMap((ev) => [ev, ev]))).toEqual(once);
  });

  it('never mutates the state it is given', () => {
    const before = foldThread('t1', [opened, e(2, 'remarked', { body: 'm', reading: 'r', evidence: [H1] })]);
    const frozen = structuredClone(before);
    evolveThread(before, e(3, 'resolved', { reply: 1 }));
    evolveThread(before, e(3, 'retracted', { reply: 1 }));
    expect(before).toEqual(frozen);
  });

  it('the Issue view has exactly the spec fields, edited or not, labels [] for local; the timeline is its own read', () => {
    const issue = threadIssue(foldThread('t1', [opened]));
    const SPEC = ['body', 'by', 'concern', 'created', 'evidence', 'id', 'labels', 'nodes', 'replies', 'status', 'store'].sort();
    expect(Object.keys(issue).sort()).toEqual(SPEC);
    const changed = foldThread('t1', [opened, e(2, 'edited', { body: 'B2' }, 'cy'), e(3, 'closed', {}, 'bob'), e(4, 'reopened', {})]);
    expect(Object.keys(threadIssue(changed)).sort()).toEqual(SPEC);
    expect(threadTimeline(changed)).toEqual({ id: 't1', notes: [], carried: {}, events: [{ type: 'opened', by: 'ann', at: at(1) }, { type: 'edited', by: 'cy', at: at(2) }, { type: 'closed', by: 'bob', at: at(3) }, { type: 'reopened', by: 'ann', at: at(4) }] });
    expect(issue).toMatchObject({ id: 't1', store: 'local', labels: [] });
    expect(threadIssue(foldThread('t1', [opened, e(2, 'promoted', { forgeId: 'g#1', url: 'https://u' })])).url).toBe('https://u');
    expect(initialThread('x').status).toBe('absent');
  });

  it('a reply is {by, at, body} whatever it carried (spec §2.1 rule 3); which reply carried which file is the timeline read\'s `carried`, by reply number', () => {
    const state = foldThread('t1', [opened, e(2, 'replied', { body: 'shot', evidence: [H1] }), e(3, 'replied', { body: 'none', evidence: [] }), e(4, 'remarked', { body: 'm', reading: 'x', evidence: [H2] })]);
    expect(threadIssue(state).replies.map((r) => Object.keys(r).sort())).toEqual([['at', 'body', 'by'], ['at', 'body', 'by'], ['at', 'body', 'by', 'reading', 'resolved']]);
    expect(threadTimeline(state).carried).toEqual({ '1': [H1], '3': [H2] });
  });
});
