import { issueNodes, isNodeId, TrellisError, type ThreadCommand } from '../../events/index.js';
import {
  evalRemarkThreads,
  issueThreads,
  localIssues,
  mergeIssues,
  threadIssue,
  type Issue,
  type ThreadState,
} from '../../projections/index.js';
import { isEvidenceHash } from '../evidence.js';
import type { Project } from '../project.js';
import type { ThreadProblem } from './projection-cache.js';
import { newThreadId, requireLocalId } from './thread-id.js';
import type { ThreadsRead } from './thread-store.js';

/*
 * One function per user-facing issue verb, shared by the CLI and the HTTP routes: a surface parses its
 * input, calls one of these, and renders what comes back.
 */

/** The stores an issue can be written to. Forges join this list when configured. */
export const writableStores = (): string[] => ['local'];

export interface OpenInput {
  readonly concern: string;
  readonly body?: string;
  readonly nodes?: readonly string[];
  /** Opens an eval-remark thread scoped to this scenario: never an issue, kept for the eval scoreboard. */
  readonly scenario?: string;
  readonly store?: string;
  readonly by: string;
}

export async function openIssue(p: Project, input: OpenInput): Promise<{ id: string; thread: ThreadState }> {
  requireStore(input.store ?? 'local');
  const concern = requireText(input.concern, 'concern').trim();
  const body = input.body ?? '';
  const explicit = (input.nodes ?? []).map((n) => n.trim());
  const bad = explicit.find((n) => !isNodeId(n));
  if (bad !== undefined) throw new TrellisError('INVALID_INPUT', `'${bad}' is not a node id (a path below the spec root, without .md, e.g. auth/login)`);
  const id = newThreadId(p.random);
  const { state } = await p.threads.write(id, {
    type: 'open',
    concern,
    body,
    nodes: issueNodes(explicit, `${concern}\n${body}`),
    ...(input.scenario !== undefined ? { scope: { scenario: requireText(input.scenario, 'scenario') } } : {}),
    ...meta(p, input.by),
  });
  return { id, thread: state };
}

export interface ReplyInput {
  readonly body: string;
  readonly evidence?: readonly string[];
  readonly by: string;
}

/** Appends a reply; returns the issue and the new reply's number. */
export async function replyToIssue(p: Project, id: string, input: ReplyInput): Promise<{ issue: Issue; reply: number }> {
  const evidence = requireEvidence(p, input.evidence ?? []);
  return appendReply(p, id, { type: 'reply', body: requireText(input.body, 'body'), evidence, ...meta(p, input.by) });
}

export interface RemarkInput extends ReplyInput {
  readonly reading: string;
}

/** Appends a remark: a reply with a resolved bit, authored against `reading`. */
export async function remarkOnIssue(p: Project, id: string, input: RemarkInput): Promise<{ issue: Issue; reply: number }> {
  const evidence = requireEvidence(p, input.evidence ?? []);
  return appendReply(p, id, {
    type: 'remark',
    body: requireText(input.body, 'body'),
    reading: requireText(input.reading, 'reading'),
    evidence,
    ...meta(p, input.by),
  });
}

export type ReplyAction = 'resolve' | 'unresolve' | 'retract';

/** Resolves or unresolves a remark, or retracts any reply, by its 1-based number. */
export async function actOnReply(p: Project, id: string, action: ReplyAction, reply: number, by: string): Promise<{ issue: Issue; changed: boolean }> {
  if (!Number.isInteger(reply) || reply < 1) throw new TrellisError('INVALID_INPUT', `reply number must be a whole number from 1, not ${reply}`);
  const { state, events } = await p.threads.write(requireIssueId(id), { type: action, reply, ...meta(p, by) });
  return { issue: visible(state), changed: events.length > 0 };
}

/** Closes a local thread: it becomes `landed`. */
export async function closeIssue(p: Project, id: string, by: string): Promise<Issue> {
  const { state } = await p.threads.write(requireIssueId(id), { type: 'close', ...meta(p, by) });
  return visible(state);
}

/**
 * Promotes an open local thread to the project's forge. Until a forge is configured in trellis.json,
 * refuses with NO_FORGE after checking the thread is a promotable issue.
 */
export async function promoteIssue(p: Project, id: string, _by: string): Promise<Issue> {
  const issue = visible(await p.threads.get(requireIssueId(id)));
  if (issue.status !== 'open') throw new TrellisError('THREAD_NOT_OPEN', `the thread is ${issue.status}: only an open thread promotes`);
  if (p.settings().forges.length === 0) {
    throw new TrellisError('NO_FORGE', 'no forge is configured to promote to: add one to "forges" in trellis.json, e.g. [{ "driver": "github", "host": "github.com", "repo": "owner/name" }]');
  }
  throw new TrellisError('NO_FORGE', `no driver can write to the configured forge (${p.settings().forges.map((f) => `${f.driver}:${f.host}`).join(', ')}) in this version of trellis`);
}

/** One issue, from the same eval-remark-free set every issue surface reads. */
export async function showIssue(p: Project, id: string): Promise<Issue> {
  return visible(await p.threads.get(requireIssueId(id)));
}

export interface ListInput {
  readonly node?: string;
  readonly store?: string;
  /** Include issues that are no longer open. */
  readonly all?: boolean;
}

export interface IssueList {
  readonly issues: readonly Issue[];
  /** Threads that could not be read, reported by name while the others still list. */
  readonly problems: readonly ThreadProblem[];
}

// The store hands back the same read while no ref has moved; so is the list built from it.
const mergedOf = new WeakMap<object, IssueList>();

/** The merged list, newest first: every store interleaved, eval-remark threads excluded. */
export async function mergedIssues(p: Project): Promise<IssueList> {
  return mergedFrom(await p.threads.all());
}

/** The merged list of one read of the threads (memoized on that read). */
export function mergedFrom(read: ThreadsRead): IssueList {
  let list = mergedOf.get(read);
  if (!list) mergedOf.set(read, (list = { issues: mergeIssues(localIssues(read.threads)), problems: read.problems }));
  return list;
}

/** The merged list filtered as `trellis issue ls` filters it. */
export async function listIssues(p: Project, input: ListInput = {}): Promise<IssueList> {
  if (input.store !== undefined) requireStore(input.store);
  const { issues, problems } = await mergedIssues(p);
  return {
    issues: issues.filter(
      (i) => (input.all || i.status === 'open') && (input.store === undefined || i.store === input.store) && (input.node === undefined || i.nodes.includes(input.node)),
    ),
    problems,
  };
}

/** The separate read that keeps only eval-remark threads, for the eval scoreboard. */
export async function evalRemarks(p: Project): Promise<{ threads: ThreadState[]; problems: readonly ThreadProblem[] }> {
  const { threads, problems } = await p.threads.all();
  return { threads: evalRemarkThreads(threads), problems };
}

async function appendReply(p: Project, id: string, command: ThreadCommand): Promise<{ issue: Issue; reply: number }> {
  const { state } = await p.threads.write(requireIssueId(id), command);
  return { issue: visible(state), reply: state.replies.length };
}

/** Eval-remark threads are not issues: to every issue verb they do not exist. */
function visible(state: ThreadState): Issue {
  if (issueThreads([state]).length === 0) throw new TrellisError('THREAD_NOT_FOUND', `no issue ${state.id}`);
  return threadIssue(state);
}

function requireIssueId(id: string): string {
  return requireLocalId(id);
}

function requireStore(store: string): void {
  const stores = writableStores();
  if (!stores.includes(store)) throw new TrellisError('UNKNOWN_STORE', `no store '${store}'; stores here: ${stores.join(', ')}`);
}

function requireText(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw new TrellisError('INVALID_INPUT', `${field} must be non-empty text`);
  return value;
}

function requireEvidence(p: Project, hashes: readonly string[]): string[] {
  const bad = hashes.find((h) => !isEvidenceHash(h));
  if (bad !== undefined) throw new TrellisError('INVALID_INPUT', `'${bad}' is not an evidence hash (64 lowercase hex digits of sha256)`);
  p.evidence.require(hashes);
  return [...new Set(hashes)];
}

function meta(p: Project, by: string): { by: string; at: string } {
  return { by: requireText(by, 'author (--by)').trim(), at: p.now().toISOString() };
}
