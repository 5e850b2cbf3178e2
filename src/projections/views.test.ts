import { describe, expect, it } from 'vitest';
import type { ThreadEvent } from '../events/index.js';
import type { Issue } from './issue.js';
import { evalRemarkThreads, issueThreads, localIssues, mergeIssues } from './issue-list.js';
import { freshness, threadFreshness } from './freshness.js';
import { nodeSlice } from './node-slice.js';
import { evolveThread, foldThread, type ThreadState } from './thread.js';

const e = (clock: number, type: ThreadEvent['type'], data: object, at = `2026-03-01T10:00:0${clock}.000Z`): ThreadEvent =>
  ({ v: 1, type, at, by: 'ann', clock, data }) as ThreadEvent;
const open = (id: string, created: string, nodes: string[] = [], scope?: { scenario: string }) =>
  foldThread(id, [e(1, 'opened', { concern: id, body: '', nodes, ...(scope ? { scope } : {}) }, created)]);

const issue = (id: string, created: string, store = 'local', status = 'open', nodes: string[] = []): Issue => ({
  id,
  store,
  concern: id,
  by: 'x',
  status,
  nodes,
  created,
  body: '',
  replies: [],
  evidence: [],
  labels: [],
});

describe('merged list', () => {
  it('interleaves stores newest first, never in store blocks', () => {
    const local = [issue('l1', '2026-01-01T00:00:01Z'), issue('l2', '2026-01-01T00:00:03Z')];
    const forge = [issue('github.com#1', '2026-01-01T00:00:02Z', 'github.com'), issue('github.com#2', '2026-01-01T00:00:04Z', 'github.com')];
    expect(mergeIssues(local, forge).map((i) => i.id)).toEqual(['github.com#2', 'l2', 'github.com#1', 'l1']);
  });

  it('breaks creation ties by id, so the order is stable', () => {
    const t = '2026-01-01T00:00:00Z';
    expect(mergeIssues([issue('b', t), issue('a', t)], [issue('c', t)]).map((i) => i.id)).toEqual(['a', 'b', 'c']);
  });

  it('excludes eval-remark threads at the source; the separate read keeps only them', () => {
    const threads = [open('i1', '2026-01-01T00:00:01Z'), open('ev', '2026-01-01T00:00:02Z', [], { scenario: 's' }), foldThread('absent', [])];
    expect(issueThreads(threads).map((t) => t.id)).toEqual(['i1']);
    expect(localIssues(threads).map((i) => i.id)).toEqual(['i1']);
    expect(evalRemarkThreads(threads).map((t) => t.id)).toEqual(['ev']);
  });
});

describe('node slice', () => {
  it('gives each node its issues in merged order and the open subset, slim', () => {
    const merged = mergeIssues([
      issue('a', '2026-01-01T00:00:01Z', 'local', 'open', ['n1', 'n2']),
      issue('b', '2026-01-01T00:00:02Z', 'local', 'landed', ['n1']),
      issue('github.com#9', '2026-01-01T00:00:03Z', 'github.com', 'closed', ['n2']),
      issue('c', '2026-01-01T00:00:04Z', 'local', 'open', []),
    ]);
    const slice = nodeSlice(merged);
    expect(Object.keys(slice).sort()).toEqual(['n1', 'n2']);
    expect(slice.n1!.issues.map((i) => i.id)).toEqual(['b', 'a']);
    expect(slice.n1!.openIssues.map((i) => i.id)).toEqual(['a']);
    expect(slice.n2!.issues.map((i) => i.id)).toEqual(['github.com#9', 'a']);
    expect(slice.n2!.openIssues.map((i) => i.id)).toEqual(['a']);
    expect(slice.n1!.issues[0]).toEqual({ id: 'b', store: 'local', concern: 'b', status: 'landed', created: '2026-01-01T00:00:02Z' });
  });

  it('lists an issue once per node even when the node is repeated', () => {
    expect(nodeSlice([issue('a', 't', 'local', 'open', ['n', 'n'])]).n!.issues).toHaveLength(1);
  });

  it('keeps node ids that name Object.prototype members as plain keys', () => {
    const slice = nodeSlice([issue('a', 't', 'local', 'open', ['__proto__', 'constructor', 'toString'])]);
    expect(Object.keys(slice).sort()).toEqual(['__proto__', 'constructor', 'toString']);
    expect(slice['__proto__']!.issues.map((i) => i.id)).toEqual(['a']);
    expect(slice['constructor']!.openIssues.map((i) => i.id)).toEqual(['a']);
  });

  it('lists 20,000 issues on one node once each, in merged order', () => {
    const many = Array.from({ length: 20_000 }, (_, n) => issue(`i${n}`, 't', 'local', n % 2 ? 'open' : 'landed', ['hot', 'hot']));
    const slice = nodeSlice(many);
    expect(slice.hot!.issues).toHaveLength(20_000);
    expect(slice.hot!.openIssues).toHaveLength(10_000);
    expect(slice.hot!.issues[19_999]!.id).toBe('i19999');
  });
});

describe('freshness stamp', () => {
  const stamp = (threads: ThreadState[]) => freshness(threads.map(threadFreshness));
  const base = foldThread('t', [e(1, 'opened', { concern: 'c', body: '', nodes: [] }), e(2, 'remarked', { body: 'm', reading: 'r', evidence: [] })]);

  it('counts open threads, threads and replies, and the latest activity', () => {
    const other = foldThread('u', [e(1, 'opened', { concern: 'c', body: '', nodes: [] }), e(2, 'closed', {}, '2026-03-02T00:00:00.000Z')]);
    expect(stamp([base, other])).toEqual({ open: 1, threads: 2, replies: 1, latest: '2026-03-02T00:00:00.000Z', revision: 4 });
    expect(stamp([])).toEqual({ open: 0, threads: 0, replies: 0, latest: null, revision: 0 });
  });

  it.each<[string, ThreadEvent[]]>([
    ['a reply', [e(3, 'replied', { body: 'x', evidence: [] })]],
    ['a remark', [e(3, 'remarked', { body: 'x', reading: 'r', evidence: [] })]],
    ['a resolve', [e(3, 'resolved', { reply: 1 })]],
    ['a retract', [e(3, 'retracted', { reply: 1 })]],
    ['a close', [e(3, 'closed', {})]],
    ['a resolve and an unresolve in the same millisecond as the last write', [
      e(3, 'resolved', { reply: 1 }, base.updated),
      e(4, 'unresolved', { reply: 1 }, base.updated),
    ]],
  ])('changes on %s', (_, events) => {
    const after = events.reduce(evolveThread, base);
    expect(after.clock).toBeGreaterThan(base.clock);
    expect(stamp([after])).not.toEqual(stamp([base]));
  });
});

