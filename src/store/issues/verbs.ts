import { issueNodes, isNodeId, isScenarioId, isTrellisError, TrellisError, type ScenarioScope, type ThreadCommand } from '../../events/index.js';
// Each projection from its own module: the index also carries the spec-node parser and its YAML library
// (~35 ms to load), which no issue verb needs (CLI start-up, issue 8).
import { withChecks } from '../../projections/issue-checks.js';
import { issueThreads } from '../../projections/issue-list.js';
import type { Issue } from '../../projections/issue.js';
import { threadIssue, type ThreadState } from '../../projections/thread.js';
import { findReading } from './find-reading.js';
import { requireKnownNodes } from './known-nodes.js';
import { isEvidenceHash } from '../evidence/evidence.js';
import { parseForgeId } from '../forge/driver.js';
import { withMarker } from '../forge/marker.js';
import type { IssuesProject as Project } from './issues-project.js';
import { mergedIssues, pullForges, type IssueList } from './merged-list.js';
import { newThreadId, requireLocalId } from '../project/ids.js';
import { existing, writeThread } from './known-issue.js';
import { replyPrompt } from './reply-prompt.js';

/*
 * One function per user-facing issue verb, shared by the CLI and the HTTP routes: a surface parses its
 * input, calls one of these, and renders what comes back. A forge id (`<host>#<n>`) routes to that
 * forge's driver; everything else is a local thread. Nothing after this file branches on the store.
 */

/** The stores an issue can be written to: local, then every configured forge. */
export const writableStores = (p: Project): string[] => ['local', ...p.forges.stores()];

export interface OpenInput {
  readonly concern: string;
  readonly body?: string;
  readonly nodes?: readonly string[];
  /** Opens an eval-remark thread scoped to this scenario: never an issue, kept for the eval scoreboard. */
  readonly scenario?: string;
  /** With `scenario`: the reading the remark is filed against; its filer becomes the thread's originator. */
  readonly reading?: string;
  /** Scenarios that must pass for the work on the issue to count: written into its body as a `checks:` line (DESIGN.md §14). */
  readonly checks?: readonly string[];
  readonly store?: string;
  readonly by: string;
}

/** Opens an issue in the chosen store (default local). A forge store creates the forge issue directly. */
export async function openIssue(p: Project, input: OpenInput): Promise<{ id: string; issue: Issue }> {
  const store = input.store ?? 'local';
  requireStore(p, store);
  const concern = requireText(input.concern, 'concern').trim();
  const checks = (input.checks ?? []).map((c) => c.trim());
  const badCheck = checks.find((c) => !isScenarioId(c));
  if (badCheck !== undefined) throw new TrellisError('INVALID_INPUT', `--scenario-check '${badCheck}' is not a scenario id (segments joined by /, e.g. checkout/happy-path)`);
  if (checks.length && input.scenario !== undefined) throw new TrellisError('INVALID_INPUT', 'an eval-remark thread (--scenario) carries no checks; --scenario-check is for issues');
  const body = withChecks(input.body ?? '', checks);
  const explicit = (input.nodes ?? []).map((n) => n.trim());
  const bad = explicit.find((n) => !isNodeId(n));
  if (bad !== undefined) throw new TrellisError('INVALID_INPUT', `'${bad}' is not a node id (a path below the spec root, without .md, e.g. auth/login)`);
  await requireKnownNodes(p, explicit);
  const nodes = issueNodes(explicit, `${concern}\n${body}`);
  const by = author(input.by);
  if (store !== 'local') {
    if (input.scenario !== undefined) throw new TrellisError('NOT_SUPPORTED', 'eval-remark threads are local; drop --store or --scenario');
    const created = await p.forges.driver(store)!.create({ title: concern, body: withMarker(body, nodes) });
    const id = `${store}#${created.number}`;
    return { id, issue: await readBack(p, id, `created ${id} (${created.url})`) };
  }
  if (input.reading !== undefined && input.scenario === undefined) throw new TrellisError('INVALID_INPUT', '--reading names a reading of a scenario: give --scenario <id> with it');
  let scope: ScenarioScope | undefined;
  if (input.scenario !== undefined) {
    const scenario = requireText(input.scenario, 'scenario').trim();
    const reading = input.reading === undefined ? undefined : await findReading(p, scenario, requireText(input.reading, 'reading').trim());
    scope = reading ? { scenario, reading: reading.id, originator: reading.by } : { scenario };
  }
  const id = newThreadId(p.random);
  const { state } = await p.threads.write(id, {
    type: 'open',
    concern,
    body,
    nodes,
    ...(scope ? { scope } : {}),
    by,
    at: p.now().toISOString(),
  });
  return { id, issue: threadIssue(state) };
}

export interface ReplyInput {
  readonly body: string;
  readonly evidence?: readonly string[];
  readonly by: string;
}

export interface ReplyResult {
  readonly issue: Issue;
  /** The new reply's number. */
  readonly reply: number;
  /** The originator session this reply was passed to, when it is online. */
  readonly loopedIn: string | null;
}

/**
 * Replies on either store: a local id appends an event (evidence deduped into the thread); a forge id
 * posts a real comment, evidence riding the body as image links. Never queued: a forge failure fails.
 */
export async function replyToIssue(p: Project, id: string, input: ReplyInput): Promise<ReplyResult> {
  const evidence = requireEvidence(p, input.evidence ?? []);
  const body = requireText(input.body, 'body');
  const by = author(input.by);
  const forge = forgeTarget(p, id);
  if (forge) {
    await forge.driver.comment(forge.number, withEvidenceLinks(body, evidence));
    const issue = await readBack(p, id);
    // A forge issue's author is a forge account, never a session: a forge reply loops in no one.
    return { issue, reply: issue.replies.length, loopedIn: null };
  }
  return appendReply(p, id, { type: 'reply', body, evidence, by, at: p.now().toISOString() });
}

/** Refuses as `replyToIssue` would, short of evidence: asked before a reply's files are stored (a forge answers later). */
export async function checkReply(p: Project, id: string, input: Omit<ReplyInput, 'evidence'>): Promise<void> {
  requireText(input.body, 'body');
  author(input.by);
  if (forgeTarget(p, id)) return;
  await existing(p, id);
}

export interface RemarkInput extends ReplyInput {
  readonly reading: string;
}

/** Appends a remark: a reply with a resolved bit, authored against `reading`. Local threads only. */
export async function remarkOnIssue(p: Project, id: string, input: RemarkInput): Promise<ReplyResult> {
  localOnly(id, 'remarks');
  const evidence = requireEvidence(p, input.evidence ?? []);
  return appendReply(p, id, {
    type: 'remark',
    body: requireText(input.body, 'body'),
    reading: requireText(input.reading, 'reading'),
    evidence,
    by: author(input.by),
    at: p.now().toISOString(),
  });
}

export type ReplyAction = 'resolve' | 'unresolve' | 'retract';

/** Resolves or unresolves a remark, or retracts any reply, by its 1-based number. Local threads only. */
export async function actOnReply(p: Project, id: string, action: ReplyAction, reply: number, by: string): Promise<{ issue: Issue; changed: boolean }> {
  localOnly(id, `${action} of a reply`);
  if (!Number.isInteger(reply) || reply < 1) throw new TrellisError('INVALID_INPUT', `reply number must be a whole number from 1, not ${reply}`);
  const { state, events } = await writeThread(p, id, { type: action, reply, by: author(by), at: p.now().toISOString() });
  return { issue: visible(state), changed: events.length > 0 };
}

/** Closes an issue: a local thread becomes `landed`; a forge issue is closed by its driver, then read back. */
export async function closeIssue(p: Project, id: string, by: string, opts: { session?: string } = {}): Promise<Issue> {
  const forge = forgeTarget(p, id);
  if (forge) {
    await forge.driver.close(forge.number);
    return readBack(p, id);
  }
  const { state } = await writeThread(p, id, { type: 'close', by: author(by), at: p.now().toISOString(), ...(opts.session ? { session: opts.session } : {}) });
  return visible(state);
}

export interface EditInput {
  readonly concern?: string;
  readonly body?: string;
  readonly by: string;
}

/**
 * Rewrites a local thread's concern and/or body: an `edited` event, so the thread says "edited" and
 * `git log` of its ref keeps every version. A forge issue is edited on its forge.
 */
export async function editIssue(p: Project, id: string, input: EditInput): Promise<{ issue: Issue; changed: boolean }> {
  localOnly(id, 'edits');
  if (input.concern === undefined && input.body === undefined) throw new TrellisError('INVALID_INPUT', 'an edit needs a new concern or a new body (or both)');
  const concern = input.concern === undefined ? undefined : requireText(input.concern, 'concern').trim();
  const { state, events } = await writeThread(p, id, {
    type: 'edit',
    ...(concern !== undefined ? { concern } : {}),
    ...(input.body !== undefined ? { body: input.body } : {}),
    by: author(input.by),
    at: p.now().toISOString(),
  });
  return { issue: visible(state), changed: events.length > 0 };
}

/** Opens a landed local thread again (`reopened`); an open one stays as it is. */
export async function reopenIssue(p: Project, id: string, by: string): Promise<{ issue: Issue; changed: boolean }> {
  localOnly(id, 'reopens');
  const { state, events } = await writeThread(p, id, { type: 'reopen', by: author(by), at: p.now().toISOString() });
  return { issue: visible(state), changed: events.length > 0 };
}

/**
 * Promotes an open local thread to a forge: the forge issue is created first (concern as title; body,
 * `Spec:` marker, evidence hashes and a provenance footer naming the caller), then the local thread is
 * marked landed with a reply carrying the permalink; its ref stays as the trail. A forge failure fails
 * loud and leaves the local thread as it was. The store holds the thread's ref locked from the check
 * that it is open to the append (ThreadStore.writeLocked), so of two promotes of one thread, in one
 * process or two, one creates the forge issue and the other finds the thread landed or the ref held.
 */
export async function promoteIssue(p: Project, id: string, by: string, store?: string): Promise<Issue> {
  if (parseForgeId(id)) throw new TrellisError('THREAD_NOT_OPEN', `${id} already lives on its forge: only an open local thread promotes`);
  requireOpen(await existing(p, id));
  const stores = p.forges.stores();
  if (stores.length === 0) {
    throw new TrellisError('NO_FORGE', 'no forge is configured to promote to: add one to "forges" in trellis.json, e.g. [{ "driver": "github", "host": "github.com", "repo": "owner/name" }]');
  }
  const target = store ?? stores[0]!;
  requireStore(p, target);
  if (target === 'local') throw new TrellisError('INVALID_INPUT', 'promote moves a thread to a forge; name a forge store');
  const caller = author(by);
  let created: { forgeId: string; url: string } | undefined;
  let state: ThreadState;
  try {
    ({ state } = await p.threads.writeLocked(id, async (current) => {
      // Checked again under the lock: another promote may have landed the thread since the read above.
      const issue = requireOpen(visible(current));
      const body = [
        withMarker(issue.body, issue.nodes),
        ...(issue.evidence.length ? [`Evidence: ${issue.evidence.map((h) => `sha256:${h}`).join(', ')}`] : []),
        `---\nPromoted from local thread ${issue.id} by ${caller} with trellis.`,
      ]
        .filter(Boolean)
        .join('\n\n');
      const made = await p.forges.driver(target)!.create({ title: issue.concern, body });
      created = { forgeId: `${target}#${made.number}`, url: made.url };
      return { type: 'promote', ...created, by: caller, at: p.now().toISOString() };
    }));
  } catch (err) {
    // The forge issue exists now: say where, so nobody promotes again and makes a second one.
    if (created) {
      throw new TrellisError(
        isTrellisError(err) ? err.code : 'FORGE_FAILED',
        `created ${created.forgeId} (${created.url}), but the local thread could not be marked landed: ${(err as Error).message}`,
      );
    }
    if (isTrellisError(err) && err.code === 'REF_LOCKED') throw new TrellisError('REF_LOCKED', `${id} was not promoted; promote it again once the other writer is done (trellis issue show ${id} says whether it landed): ${err.message}`);
    throw err;
  }
  await p.forges.refresh(target);
  return visible(state);
}

function requireOpen(issue: Issue): Issue {
  if (issue.status !== 'open') throw new TrellisError('THREAD_NOT_OPEN', `the thread is ${issue.status}: only an open thread promotes`);
  return issue;
}

/** One issue, from the same eval-remark-free merged set every issue surface reads. */
export async function showIssue(p: Project, id: string): Promise<Issue> {
  if (forgeTarget(p, id)) {
    if (p.forgeReads === 'live') await pullForges(p, parseForgeId(id)!.store, true);
    const found = p.forges.find(id);
    if (!found) throw new TrellisError('THREAD_NOT_FOUND', `no issue ${id}`);
    return found.issue;
  }
  return await existing(p, id);
}

export interface ListInput {
  readonly node?: string;
  readonly store?: string;
  /** Include issues that are no longer open. */
  readonly all?: boolean;
}

/** The merged list filtered as `trellis issue ls` filters it. */
export async function listIssues(p: Project, input: ListInput = {}): Promise<IssueList> {
  if (input.store !== undefined) requireStore(p, input.store);
  const list = await mergedIssues(p);
  return {
    ...list,
    issues: list.issues.filter(
      (i) => (input.all || i.status === 'open') && (input.store === undefined || i.store === input.store) && (input.node === undefined || i.nodes.includes(input.node)),
    ),
  };
}

/** After a forge write the answer is the forge's read-back, never a local echo. */
async function readBack(p: Project, id: string, done = `wrote ${id}`): Promise<Issue> {
  const { store } = parseForgeId(id)!;
  const { failures } = await p.forges.refresh(store);
  const found = p.forges.find(id);
  if (!found) throw new TrellisError('FORGE_FAILED', `${done}, but could not read it back${failures.length ? ` (${failures[0]})` : ''}; the write happened, do not repeat it`);
  return found.issue;
}

function forgeTarget(p: Project, id: string) {
  const parsed = parseForgeId(id);
  if (!parsed) return null;
  const driver = p.forges.driver(parsed.store);
  if (!driver) throw new TrellisError('THREAD_NOT_FOUND', `no issue ${id}: no forge '${parsed.store}' is configured`);
  return { driver, number: parsed.number };
}

function localOnly(id: string, what: string): void {
  if (parseForgeId(id)) throw new TrellisError('NOT_SUPPORTED', `${what} exist only on local threads; ${id} lives on its forge`);
}

async function appendReply(p: Project, id: string, command: ThreadCommand): Promise<ReplyResult> {
  // An eval-remark thread does not exist to issue verbs: refuse before writing, not after.
  await existing(p, id);
  const { state } = await writeThread(p, id, command);
  const issue = visible(state);
  return { issue, reply: state.replies.length, loopedIn: await loopIn(p, state, command.by) };
}

/** Passes a reply to the thread's originator if that is a session that is online; silent otherwise. */
async function loopIn(p: Project, state: ThreadState, replier: string): Promise<string | null> {
  const originator = state.by;
  if (originator === replier || !(await p.sessions.isOnline(originator))) return null;
  const reply = state.replies[state.replies.length - 1];
  await p.sessions.notify(originator, replyPrompt({ thread: state.id, what: `issue "${state.concern}"`, by: replier, body: reply?.body ?? '' }));
  return originator;
}

/** Evidence has no field on a forge comment: each hash rides the body as an image link. */
function withEvidenceLinks(body: string, evidence: readonly string[]): string {
  if (!evidence.length) return body;
  const base = process.env.TRELLIS_API_URL;
  const link = (h: string) => (base ? `![evidence ${h.slice(0, 12)}](${new URL(`api/evidence/${h}`, base).href})` : `![evidence ${h.slice(0, 12)}](sha256:${h})`);
  return `${body}\n\n${evidence.map(link).join('\n')}`;
}

/** Eval-remark threads are not issues: to every issue verb they do not exist. */
function visible(state: ThreadState): Issue {
  if (issueThreads([state]).length === 0) throw new TrellisError('THREAD_NOT_FOUND', `no issue ${state.id}`);
  return threadIssue(state);
}

function requireStore(p: Project, store: string): void {
  const stores = writableStores(p);
  if (!stores.includes(store)) throw new TrellisError('UNKNOWN_STORE', `no store '${store}'; stores here: ${stores.join(', ')}`);
}

function requireText(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw new TrellisError('INVALID_INPUT', `${field} must be non-empty text`);
  return value;
}

const author = (by: string): string => requireText(by, 'author (--by)').trim();

function requireEvidence(p: Project, hashes: readonly string[]): string[] {
  const bad = hashes.find((h) => !isEvidenceHash(h));
  if (bad !== undefined) throw new TrellisError('INVALID_INPUT', `'${bad}' is not an evidence hash (64 lowercase hex digits of sha256)`);
  p.evidence.require(hashes);
  return [...new Set(hashes)];
}
