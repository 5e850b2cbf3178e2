import type { RecordedEvent, ThreadEvent } from '../events/index.js';
import type { Issue } from './issue.js';
import { foldThread, threadIssue, type ThreadState } from './thread.js';

/**
 * Folds a recorded log of many streams into thread states, keyed by thread id. Streams may interleave
 * and events may come in any order or twice: each stream folds in (clock, at, id) order.
 */
export function foldThreads(log: Iterable<RecordedEvent>): Map<string, ThreadState> {
  const byStream = new Map<string, ThreadEvent[]>();
  for (const { stream, event } of log) {
    const list = byStream.get(stream);
    if (list) list.push(event);
    else byStream.set(stream, [event]);
  }
  const threads = new Map<string, ThreadState>();
  for (const [stream, events] of byStream) threads.set(stream, foldThread(stream, events));
  return threads;
}

const isOpened = (t: ThreadState) => t.status !== 'absent';
const isEvalRemark = (t: ThreadState) => t.scope !== undefined;

/**
 * The source every issue surface reads: opened threads with eval-remark threads excluded, once, here.
 */
export const issueThreads = (threads: Iterable<ThreadState>): ThreadState[] => [...threads].filter((t) => isOpened(t) && !isEvalRemark(t));

/** The separate read for the eval scoreboard: only the eval-remark threads. */
export const evalRemarkThreads = (threads: Iterable<ThreadState>): ThreadState[] => [...threads].filter((t) => isOpened(t) && isEvalRemark(t));

/** Newest first by creation; ties broken by id so the order is stable across runs and machines. */
export const newestFirst = (a: Issue, b: Issue): number => (a.created < b.created ? 1 : a.created > b.created ? -1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * The merged issue list: every store's issues interleaved by creation, newest first, never in
 * store-grouped blocks.
 */
export function mergeIssues(...stores: readonly (readonly Issue[])[]): Issue[] {
  return stores.flat().sort(newestFirst);
}

/** The local part of the merged list. */
export const localIssues = (threads: Iterable<ThreadState>): Issue[] => issueThreads(threads).map(threadIssue);
