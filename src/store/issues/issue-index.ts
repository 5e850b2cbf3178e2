import { freshness, threadFreshness, type Freshness, type FreshnessEntry } from '../../projections/freshness.js';
import { issueThreads, newestFirst } from '../../projections/issue-list.js';
import type { Issue } from '../../projections/issue.js';
import { threadIssue, type ThreadState } from '../../projections/thread.js';
import type { StreamsDelta } from '../streams/stream-store.js';

/*
 * The local part of the merged list, kept up to date from one read of the threads to the next in
 * O(change) (issue 8): a write at 50,000 threads re-sorted every issue, re-summed the freshness stamp
 * and re-sliced every node, stopping a server's event loop for ~130 ms. The reads of a stream store
 * reuse the state object of every stream that did not move, so a changed thread is one whose state is
 * not the object this index last saw; its old issue leaves the sorted lists by binary search and the new
 * one enters the same way. Lists are copied before they change (a pointer copy, ~0.1 ms at 50,000), so
 * a list handed out earlier never changes under its holder.
 */

interface Indexed {
  readonly state: ThreadState;
  /** Present for a thread that is an issue (opened, not an eval remark). */
  readonly issue?: Issue;
  readonly entry?: FreshnessEntry;
}

/** Running sums of the freshness stamp over the local issues; `latest` is recomputed only when it may drop. */
interface Sums {
  open: number;
  threads: number;
  replies: number;
  revision: number;
  latest: string | null;
}

export class IssueIndex {
  private byId = new Map<string, Indexed>();
  private sorted: Issue[] = [];
  private perNode = new Map<string, Issue[]>();
  private sums: Sums = { open: 0, threads: 0, replies: 0, revision: 0, latest: null };
  private lastStates: readonly ThreadState[] | undefined;

  /**
   * Brings the index to one read of every thread and returns the local issues, newest first. A read
   * that names what changed since the one this index last saw costs O(change); any other read is
   * compared object by object (a map lookup per thread), and rebuilt from scratch when threads are gone.
   */
  update(read: { readonly states: readonly ThreadState[]; readonly delta?: StreamsDelta<ThreadState> }): readonly Issue[] {
    const { states, delta } = read;
    if (states === this.lastStates) return this.sorted;
    if (delta && this.lastStates && delta.from.states === this.lastStates) {
      if (delta.changed.size > states.length / 4) this.rebuild(states);
      else this.apply(delta.changed);
      this.lastStates = states;
      return this.sorted;
    }
    const changed = new Map<string, ThreadState>();
    let kept = 0;
    for (const s of states) {
      const had = this.byId.get(s.id);
      if (had?.state === s) kept++;
      else changed.set(s.id, s);
    }
    // Threads gone since the last read (a deleted ref), or a first read: build from scratch.
    let returning = 0;
    for (const id of changed.keys()) if (this.byId.has(id)) returning++;
    if (kept + returning < this.byId.size || changed.size > states.length / 4) this.rebuild(states);
    else if (changed.size) this.apply(changed);
    this.lastStates = states;
    return this.sorted;
  }

  /** The local issues as of the last update, newest first. */
  issues(): readonly Issue[] {
    return this.sorted;
  }

  /** The local issues bound to `node`, newest first (an issue naming a node twice is listed once). */
  onNode(node: string): readonly Issue[] {
    return this.perNode.get(node) ?? [];
  }

  /** The nodes at least one local issue is bound to. */
  nodes(): IterableIterator<string> {
    return this.perNode.keys();
  }

  /** The local part of the freshness stamp, as `freshness` over the local issues would give it. */
  freshness(): Freshness {
    const { open, threads, replies, revision, latest } = this.sums;
    return { open, threads, replies, latest, revision };
  }

  private rebuild(states: readonly ThreadState[]): void {
    this.byId = new Map();
    const issues = new Set(issueThreads(states));
    for (const s of states) this.byId.set(s.id, issues.has(s) ? indexed(s) : { state: s });
    this.sorted = [...this.byId.values()].flatMap((x) => (x.issue ? [x.issue] : [])).sort(newestFirst);
    this.perNode = new Map();
    for (const issue of this.sorted) {
      for (const node of new Set(issue.nodes)) {
        const list = this.perNode.get(node);
        if (list) list.push(issue);
        else this.perNode.set(node, [issue]);
      }
    }
    const f = freshness(this.sorted.map((i) => this.byId.get(i.id)!.entry!));
    this.sums = { open: f.open, threads: f.threads, replies: f.replies, revision: f.revision, latest: f.latest };
  }

  /** Applies each changed thread: its new state, or null for a thread gone from the read. */
  private apply(changed: ReadonlyMap<string, ThreadState | null>): void {
    const sorted = this.sorted.slice();
    const copied = new Set<string>();
    const nodeList = (node: string): Issue[] => {
      let list = this.perNode.get(node);
      if (!list) this.perNode.set(node, (list = []));
      else if (!copied.has(node)) this.perNode.set(node, (list = list.slice()));
      copied.add(node);
      return list;
    };
    let latestMayDrop = false;
    for (const [id, s] of changed) {
      const old = this.byId.get(id);
      const next = s === null ? undefined : issueThreads([s]).length ? indexed(s) : { state: s };
      if (next) this.byId.set(id, next);
      else this.byId.delete(id);
      if (old?.issue) {
        remove(sorted, old.issue);
        for (const node of new Set(old.issue.nodes)) {
          const list = nodeList(node);
          remove(list, old.issue);
          if (list.length === 0) this.perNode.delete(node);
        }
        this.count(old.entry!, -1);
        if (old.entry!.activity === this.sums.latest) latestMayDrop = true;
      }
      if (next?.issue) {
        insert(sorted, next.issue);
        for (const node of new Set(next.issue.nodes)) insert(nodeList(node), next.issue);
        this.count(next.entry!, 1);
        if (this.sums.latest === null || next.entry!.activity > this.sums.latest) this.sums.latest = next.entry!.activity;
        if (next.entry!.activity === this.sums.latest) latestMayDrop = false;
      }
    }
    this.sorted = sorted;
    // An issue whose activity was the latest moved back (rare: activity only grows): look again.
    if (latestMayDrop) this.sums.latest = freshness(sorted.map((i) => this.byId.get(i.id)!.entry!)).latest;
  }

  private count(e: FreshnessEntry, sign: 1 | -1): void {
    this.sums.threads += sign;
    if (e.status === 'open') this.sums.open += sign;
    this.sums.replies += sign * e.replies;
    this.sums.revision += sign * e.revision;
  }
}

const indexed = (state: ThreadState): Indexed => ({ state, issue: threadIssue(state), entry: threadFreshness(state) });

/** Where `issue` belongs in a list sorted newest first (the first index not before it). */
function place(list: readonly Issue[], issue: Issue): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (newestFirst(list[mid]!, issue) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function insert(list: Issue[], issue: Issue): void {
  list.splice(place(list, issue), 0, issue);
}

function remove(list: Issue[], issue: Issue): void {
  const at = place(list, issue);
  if (list[at] === issue) list.splice(at, 1);
  else {
    // Never expected (the list holds exactly the issues indexed); a linear search keeps it correct anyway.
    const i = list.indexOf(issue);
    if (i >= 0) list.splice(i, 1);
  }
}

/** Two lists sorted newest first, merged into one (linear; the merged list's order). */
export function mergeNewestFirst(a: readonly Issue[], b: readonly Issue[]): Issue[] {
  const out: Issue[] = new Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) out[k++] = newestFirst(a[i]!, b[j]!) <= 0 ? a[i++]! : b[j++]!;
  while (i < a.length) out[k++] = a[i++]!;
  while (j < b.length) out[k++] = b[j++]!;
  return out;
}
