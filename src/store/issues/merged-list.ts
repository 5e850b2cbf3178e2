import { TrellisError } from '../../events/index.js';
// Each projection from its own module (see verbs.ts: the index carries the spec-node parser).
import { freshness, type Freshness } from '../../projections/freshness.js';
import { evalRemarkThreads, mergeIssues } from '../../projections/issue-list.js';
import { nodeSlice, sliceOf, type NodeIssues } from '../../projections/node-slice.js';
import type { Issue } from '../../projections/issue.js';
import type { ThreadState } from '../../projections/thread.js';
import type { ForgeEntry } from '../forge/driver.js';
import { refusalLine } from '../forge/trust.js';
import type { IssuesProject } from './issues-project.js';
import type { StreamProblem } from '../streams/projection-cache.js';
import { IssueIndex, mergeNewestFirst } from './issue-index.js';
import type { ThreadsRead } from './thread-store.js';

/*
 * The merged issue list every issue surface reads: local threads and the forges' issues interleaved,
 * newest first, eval-remark threads left out; memoized per read of the threads and per version of the
 * forge slice, and kept up to date from one read to the next in O(change).
 */

export interface IssueList {
  readonly issues: readonly Issue[];
  /** Threads that could not be read, reported by name while the others still list. */
  readonly problems: readonly StreamProblem[];
  /** Forges that could not be pulled (CLI reads): the list is local plus their last listing, if any. */
  readonly notes: readonly string[];
  readonly freshness: Freshness;
}

/**
 * The merged list, newest first: every store interleaved, eval-remark threads excluded. A server passes
 * its own incremental read of the threads; otherwise a repeated read reads no tip while no ref moved.
 */
export async function mergedIssues(p: IssuesProject, readThreads: () => Promise<ThreadsRead> = () => p.threads.all({ ifMoved: true })): Promise<IssueList> {
  const notes = p.forgeReads === 'live' ? await pullForges(p) : [];
  const list = mergedFrom(p, await readThreads());
  if (p.forges.configProblem) notes.push(`forge issues are not listed: ${p.forges.configProblem}`);
  for (const r of p.forges.refused) notes.push(`${refusalLine(r)}; ${r.repair}`);
  return notes.length ? { ...list, notes } : list;
}

// Memoized per read of the threads and version of the forge slice: a warm server builds nothing twice.
const mergedOf = new WeakMap<object, { version: number; list: IssueList }>();
/** Each project's local issues, kept up to date from one read to the next in O(change). */
const indexes = new WeakMap<IssuesProject, IssueIndex>();

function localIndex(p: IssuesProject, read: ThreadsRead): IssueIndex {
  let index = indexes.get(p);
  if (!index) indexes.set(p, (index = new IssueIndex()));
  index.update(read);
  return index;
}

/** The merged list of one read of the threads and the forge slice as it is. */
export function mergedFrom(p: IssuesProject, read: ThreadsRead): IssueList {
  const memo = mergedOf.get(read);
  if (memo && memo.version === p.forges.version) return memo.list;
  const index = localIndex(p, read);
  const forge = p.forges.entries();
  const local = index.issues();
  const list: IssueList = {
    issues: forge.length ? mergeNewestFirst(local, mergeIssues(forge.map((e) => e.issue))) : local,
    problems: read.problems,
    notes: [],
    freshness: withForge(index.freshness(), forge),
  };
  mergedOf.set(read, { version: p.forges.version, list });
  return list;
}

/**
 * The freshness stamp of one read of the threads and the forge slice, without building the merged list
 * (a thread write at 50,000 threads announces its change in a few milliseconds).
 */
export function freshnessFrom(p: IssuesProject, read: ThreadsRead): Freshness {
  const memo = mergedOf.get(read);
  if (memo && memo.version === p.forges.version) return memo.list.freshness;
  return withForge(localIndex(p, read).freshness(), p.forges.entries());
}

/**
 * Each node's slice of the merged list of `read` (what `nodeSlice` of the merged list gives for it),
 * from the local index and the forge slice: the board reads only its tree's nodes.
 */
export function nodeIssuesFrom(p: IssuesProject, read: ThreadsRead): (node: string) => NodeIssues | undefined {
  const index = localIndex(p, read);
  const forge = nodeSlice(mergeIssues(p.forges.entries().map((e) => e.issue)));
  const forgeIssues = new Map(p.forges.entries().map((e) => [e.issue.id, e.issue]));
  return (node) => {
    const local = index.onNode(node);
    const remote = forge[node]?.issues.map((s) => forgeIssues.get(s.id)!) ?? [];
    if (local.length === 0 && remote.length === 0) return undefined;
    return sliceOf(remote.length ? mergeNewestFirst(local, remote) : local);
  };
}

/** The local stamp with the forge's issues added (the stamp is a sum, and a maximum, over the merged set). */
function withForge(local: Freshness, forge: readonly ForgeEntry[]): Freshness {
  if (forge.length === 0) return local;
  const f = freshness(forge.map(forgeFreshness));
  const latest = local.latest === null || (f.latest !== null && f.latest > local.latest) ? f.latest : local.latest;
  return { open: local.open + f.open, threads: local.threads + f.threads, replies: local.replies + f.replies, latest, revision: local.revision + f.revision };
}

/** The separate read that keeps only eval-remark threads, for the eval scoreboard. */
export async function evalRemarks(p: IssuesProject): Promise<{ threads: ThreadState[]; problems: readonly StreamProblem[] }> {
  const { states: threads, problems } = await p.threads.all();
  return { threads: evalRemarkThreads(threads), problems };
}

/**
 * Pulls the forges now; returns one note per forge that could not be read, and one per issue or comment
 * a forge answered that its driver cannot read (left out; every other issue is listed).
 */
export async function pullForges(p: IssuesProject, only?: string, strict = false): Promise<string[]> {
  const { failures, notes } = await p.forges.refresh(only);
  if (strict && failures.length) throw new TrellisError('FORGE_UNREACHABLE', failures[0]!);
  return [...failures.map((f) => `${f}; showing the last known forge issues, if any, with the local ones`), ...notes];
}

const forgeFreshness = (e: ForgeEntry) => ({ status: e.issue.status, replies: e.issue.replies.length, activity: e.updated, revision: e.issue.replies.length + 1 });
