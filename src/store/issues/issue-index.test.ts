import { describe, expect, it } from 'vitest';
import type { ThreadEvent } from '../../events/index.js';
import { freshness, threadFreshness } from '../../projections/freshness.js';
import { issueThreads, localIssues, mergeIssues } from '../../projections/issue-list.js';
import type { Issue } from '../../projections/issue.js';
import { nodeSlice, sliceOf } from '../../projections/node-slice.js';
import { evolveThread, foldThread, type ThreadState } from '../../projections/thread.js';
import { IssueIndex, mergeNewestFirst } from './issue-index.js';

const at = (s: number) => new Date(Date.UTC(2026, 2, 1) + s * 1000).toISOString();
const ev = (clock: number, type: ThreadEvent['type'], data: object, when: string): ThreadEvent => ({ v: 1, type, at: when, by: 'ann', clock, data }) as ThreadEvent;

/** A deterministic pseudo-random sequence (xorshift), so a failure replays. */
function rng(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

/** What the index must equal: the full build the merged list, its stamp and the node slices had before. */
function full(states: readonly ThreadState[]) {
  const merged = mergeIssues(localIssues(states));
  return { merged, stamp: freshness(issueThreads(states).map(threadFreshness)), slices: nodeSlice(merged) };
}

describe('IssueIndex (the merged list kept in O(change))', () => {
  it('equals the full build after every step of a random history (opens, replies, closes, eval remarks, deletions, same-second ties), with and without the read\'s delta', () => {
    const random = rng(8);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
    const nodes = ['a', 'b', 'c/d', '__proto__'];
    let threads = new Map<string, ThreadState>();
    const index = new IssueIndex();
    let clock = 0;
    let previous: ThreadState[] = [];
    for (let step = 0; step < 600; step++) {
      // A read hands over a fresh array; threads that did not move keep their state objects.
      const next = new Map(threads);
      const changed = new Map<string, ThreadState | null>();
      const ops = 1 + Math.floor(random() * 3);
      for (let k = 0; k < ops; k++) {
        const r = random();
        clock++;
        if (r < 0.35 || next.size === 0) {
          const id = `t${step}-${k}`;
          // Creation times collide often (same second): ties are broken by id.
          const created = at(Math.floor(random() * 50));
          const bound = nodes.filter(() => random() < 0.4);
          const scope = random() < 0.1 ? { scope: { scenario: 'sc' } } : {};
          next.set(id, foldThread(id, [ev(1, 'opened', { concern: id, body: '', nodes: random() < 0.1 ? [...bound, ...bound] : bound, ...scope }, created)]));
        } else if (r < 0.8) {
          const s = next.get(pick([...next.keys()]))!;
          next.set(s.id, evolveThread(s, ev(s.clock + 1, 'replied', { body: 'r', evidence: [] }, at(100 + clock))));
        } else if (r < 0.93) {
          const s = next.get(pick([...next.keys()]))!;
          next.set(s.id, evolveThread(s, ev(s.clock + 1, 'closed', {}, at(100 + clock))));
        } else {
          next.delete(pick([...next.keys()]));
        }
      }
      for (const id of new Set([...threads.keys(), ...next.keys()])) if (threads.get(id) !== next.get(id)) changed.set(id, next.get(id) ?? null);
      threads = next;
      const states = [...threads.values()];
      const want = full(states);
      // Every other read says what changed (as a stream store's read does); the others are compared.
      const delta = step % 2 ? { from: { states: previous, problems: [] }, changed } : undefined;
      expect(index.update({ states, delta })).toEqual(want.merged);
      previous = states;
      expect(index.freshness()).toEqual(want.stamp);
      for (const node of new Set([...nodes, ...index.nodes()])) {
        const got = index.onNode(node);
        expect(got.length ? sliceOf(got) : undefined).toEqual(want.slices[node]);
      }
    }
  });

  it('never changes a list it handed out', () => {
    const index = new IssueIndex();
    const a = foldThread('a', [ev(1, 'opened', { concern: 'a', body: '', nodes: ['n'] }, at(1))]);
    const b = foldThread('b', [ev(1, 'opened', { concern: 'b', body: '', nodes: ['n'] }, at(2))]);
    const first = index.update({ states: [a, b] });
    const onNode = index.onNode('n');
    const snapshot = [...first];
    index.update({ states: [evolveThread(a, ev(2, 'closed', {}, at(3))), b] });
    expect(first).toEqual(snapshot);
    expect(onNode.map((i) => i.status)).toEqual(['open', 'open']);
    expect(index.onNode('n').map((i) => i.status)).toEqual(['open', 'landed']);
  });

  it('merges two newest-first lists as the merged list orders them', () => {
    const issue = (id: string, created: string): Issue => ({ id, store: 'local', concern: id, by: 'x', status: 'open', nodes: [], created, body: '', replies: [], evidence: [], labels: [] });
    const local = [issue('l2', at(3)), issue('a', at(1)), issue('l1', at(1))];
    const forge = [issue('github.com#2', at(4)), issue('github.com#1', at(1))];
    expect(mergeNewestFirst(local, forge)).toEqual(mergeIssues(local, forge));
  });
});
