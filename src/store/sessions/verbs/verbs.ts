import { existsSync } from 'node:fs';
import { decideSession, isNodeId, isTrellisError, TrellisError, type SessionCommand, type SessionStatus } from '../../../events/index.js';
import { sessionView, type OverlapWith, type SessionState, type SessionView } from '../../../projections/index.js';
import { newThreadId } from '../../project/ids.js';
import { appendCommand, sessionState } from '../log/session-append.js';
import type { SessionLogProject, SessionsProject } from '../log/sessions-project.js';
import { adapterOf, harnessNames } from '../agents/index.js';
import { resolveHarness } from '../agents/default-harness.js';
import { preflight } from '../agents/preflight.js';
import { budgetOf, queuePass, type SessionBudget } from './queue.js';
import { mergeByHand } from '../../../projections/merge-by-hand.js';
import { deliver, launch, record, SUPERVISOR, type BareCommand, type Delivery, type SessionRuntime } from './runtime.js';
import { noteScreenDialog } from './screen-watch.js';
import type { GateDecision } from '../checks/merge-gate.js';
import { saveWip } from '../worktrees/wip.js';
import { poolReport, type PoolReport } from '../worktrees/worktree-pool.js';
import { budgetReached } from '../usage/budget.js';
import { dropBranchIfEmpty, mainRoot, removeWorktree, sessionBranch, trunkCommit, worktreePath } from '../worktrees/worktree.js';
import { confinementFor } from '../confine/confine.js';
import { screenWatcherOf } from './screen-watcher-lease.js';
import { overlapsBetween } from '../checks/overlap-pairs.js';

/*
 * One function per user-facing session verb, shared by `trellis session ...` and the HTTP routes. A
 * mutation that commits no transition throws (a refused close never looks successful, spec §4.2 rule 3);
 * lifecycle mutations ask the adapter's shared-runtime guard before any cleanup (rule 4), and save
 * uncommitted work to `refs/trellis/wip/<id>` before it (DESIGN.md §9, lossless).
 */

export interface SpawnInput {
  readonly task: string;
  readonly harness?: string;
  readonly nodes?: readonly string[];
  readonly issue?: string;
  readonly by: string;
}

/**
 * A spawned session, and what it should know before it starts, each said up front and never blocking:
 * what its agent's first run will ask (with the repair), and other live sessions changing its nodes.
 */
export type SpawnResult = SessionView & { readonly warnings: readonly string[] };

/**
 * Spawns a session: refuses an agent that is not installed, logs it as queued, then runs a queue pass
 * (which launches it if the budget allows). A node that a live session is already changing is warned
 * about (DESIGN.md §14), never refused.
 */
export async function spawnSession(p: SessionsProject, rt: SessionRuntime, input: SpawnInput): Promise<SpawnResult> {
  const harness = resolveHarness(input.harness ?? p.settings().harness, rt.env);
  adapterOf(harness);
  const setupWarnings = await preflight(harness, { mainRoot: mainRoot(p), env: rt.env });
  // A session that should run confined and cannot here is refused before it is logged (issue 45).
  await confinementFor(harness, p.settings().sessions.confine, rt.env);
  if (typeof input.task !== 'string') throw new TrellisError('INVALID_INPUT', 'a session needs a task (text)');
  // A command line cannot carry a NUL byte (the agent would get the task cut short, or not start).
  if (input.task.includes('\0')) throw new TrellisError('INVALID_INPUT', 'a task cannot contain a NUL byte (\\0); remove it');
  const nodes = (input.nodes ?? []).map((n) => n.trim());
  const bad = nodes.find((n) => !isNodeId(n));
  if (bad !== undefined) throw new TrellisError('INVALID_INPUT', `'${bad}' is not a node id (a path below the spec root, without .md, e.g. auth/login)`);
  if (input.issue !== undefined && !/^[^\s]{1,200}$/.test(input.issue)) throw new TrellisError('INVALID_INPUT', `'${input.issue}' is not an issue id`);
  const warnings = [...setupWarnings, ...(await overlapWarnings(p, nodes))];
  const { commit } = await trunkCommit(p);
  const { checksAtDispatch } = await import('../checks/checks.js');
  const fixed = await checksAtDispatch(p, commit, input.issue ?? null);
  const id = newThreadId(p.random);
  await p.sessionLog.write(id, {
    type: 'spawn',
    harness,
    task: input.task,
    nodes,
    issue: input.issue ?? null,
    base: commit,
    branch: sessionBranch(id),
    worktree: worktreePath(p, id, rt.env),
    by: input.by,
    at: p.now().toISOString(),
    source: 'user',
    // Its checks are fixed with the spawn, in one append, before its agent can run a command (DESIGN.md §14).
    checks: fixed,
  });
  await queuePass(p, rt);
  const state = await sessionState(p, id);
  if (state.status === 'failed') throw new TrellisError('SPAWN_FAILED', `session ${id} failed to start: ${state.reason}`);
  return { ...sessionView(state), warnings };
}

/** One line per live session already changing one of `nodes`: which session, which node, which paths. */
async function overlapWarnings(p: SessionsProject, nodes: readonly string[]): Promise<string[]> {
  if (nodes.length === 0) return [];
  const { overlapTracker, changedNodes } = await overlaps();
  const index = await overlapTracker(p).refresh((await p.sessionLog.all()).states);
  const specRoot = p.settings().specRoot;
  return nodes.flatMap((node) =>
    index.changing(node).map((c) => {
      const paths = c.paths.filter((x) => changedNodes(specRoot, [x]).includes(node));
      return `session ${c.session} is already changing node ${node} (${paths.join(', ')}): expect to reconcile with it`;
    }),
  );
}

export { listSessions, type ListedSession, type SessionListing } from './list-sessions.js';

/** One session, whole, with the live sessions it overlaps (which session, which nodes and paths). */
export async function showSession(p: SessionsProject, id: string): Promise<SessionView & { readonly overlaps: readonly OverlapWith[]; readonly screenWatcher: number | null }> {
  const state = await sessionState(p, id);
  const overlapsOf = await overlapsBetween(p, (await p.sessionLog.all()).states);
  // Which process reads its screen: its own watcher (its pid), else a serve, if one runs (screen-watcher.ts).
  return { ...sessionView(state), overlaps: overlapsOf(id), screenWatcher: screenWatcherOf(p.gitdir, id) };
}

/** The overlap index, loaded when a verb needs it (not on the hook path). */
async function overlaps() {
  const [{ overlapTracker }, { changedNodes }] = await Promise.all([import('../checks/overlap.js'), import('../checks/checks.js')]);
  return { overlapTracker, changedNodes };
}

/** The folded state of session `id` and one appended command: session-append.ts's (the hook loads only it). */
export { appendCommand, sessionState };

/** Refuses now, before any side effect, what the state machine would refuse when appended. */
function precheck(p: SessionsProject, state: SessionState, command: BareCommand, by: string): void {
  decideSession(state, { ...command, by, at: p.now().toISOString(), source: 'user' } as SessionCommand);
}

/** The adapter's shared-runtime guard; a reason refuses the cleanup. */
async function guard(p: SessionsProject, state: SessionState, action: string): Promise<void> {
  const { states } = await p.sessionLog.all();
  const reason = adapterOf(state.harness).guard(state, states);
  if (reason) throw new TrellisError('CLEANUP_REFUSED', `${action} of ${state.id} refused: ${reason}`);
}

import { promptSession } from './prompt-verbs.js';

export { deliverHeld, promptSession, type PromptResult } from './prompt-verbs.js';

/** Stops the agent (kills its tmux session); the worktree stays and `resume` brings it back. */
export async function interruptSession(p: SessionsProject, rt: SessionRuntime, id: string, by: string): Promise<SessionView> {
  const state = await sessionState(p, id);
  precheck(p, state, { type: 'interrupt', reason: 'by-user' }, by);
  await guard(p, state, 'interrupt');
  // Logged first: the pane-died hook that the kill fires then finds the session already interrupted.
  const { state: after } = await appendCommand(p, id, { type: 'interrupt', reason: 'by-user' }, by);
  if (state.tmux) await rt.tmux.kill(state.tmux.session);
  await queuePass(p, rt);
  return sessionView(after);
}

/** Relaunches an interrupted or quarantined session in its worktree (the agent's own resume if it has one). */
export async function resumeSession(p: SessionsProject, rt: SessionRuntime, id: string, by: string): Promise<SessionView> {
  const before = await sessionState(p, id);
  // Held at its budget (issue 42): resumed only once a person raised it.
  if (before.status === 'awaiting' && before.reason === 'budget') {
    const over = await budgetReached(p, before);
    if (over) throw new TrellisError('SESSION_REFUSED', `session ${id} is still over its budget: ${over}; repair: raise the budget in trellis.json (sessions.budgetUsd or sessions.budgetUsdPerDay), then resume it, or close the session`);
  }
  const { state } = await appendCommand(p, id, { type: 'resume' }, by);
  return sessionView(await launch(p, rt, state, { resume: true }));
}

/** Puts the session up for review. */
export async function requestReview(p: SessionsProject, id: string, by: string): Promise<SessionView> {
  await sessionState(p, id);
  return sessionView((await appendCommand(p, id, { type: 'review' }, by)).state);
}

/**
 * Dispatches the merge to the session's own agent, as a prompt: the server never touches the main
 * checkout. Answers `{dispatched: true}` once the transition is logged (the prompt under the same
 * delivery rule as any other: held while the agent does not take input). The merge gate runs first: a
 * session whose checks block it is refused unless `override` gives a reason (logged on the session).
 */
export async function mergeSession(p: SessionsProject, rt: SessionRuntime, id: string, by: string, override?: string, fromSession?: string): Promise<{ dispatched: true; gate: GateDecision } & Delivery> {
  const state = await sessionState(p, id);
  precheck(p, state, { type: 'merge' }, by);
  // Loaded when used: the gate reads spec trees, which `session signal` (every agent hook) never needs.
  const { gateMerge } = await import('../checks/merge-gate.js');
  const gate = await gateMerge(p, state, override, { by, fromSession }, (reason, scenarios) => appendCommand(p, id, { type: 'override-merge', reason, scenarios }, by));
  const { trunk } = await trunkCommit(p);
  try {
    mergeRefusal(state, trunk, mainRoot(p));
  } catch (err) {
    // The override stays logged (the person decided the checks do not block this work): say so too.
    if (gate.through !== 'overridden' || !isTrellisError(err)) throw err;
    throw new TrellisError(err.code, `merge gate overridden for ${gate.scenarios.join(', ')} (logged on the session); ${err.message}`);
  }
  await appendCommand(p, id, { type: 'merge' }, by);
  const body = `Merge your branch ${state.branch} into ${trunk}: bring in the latest ${trunk}, resolve any conflicts, run the tests, then move ${trunk} to the result (git push . HEAD:${trunk}). Do not edit the main checkout.`;
  const { session: _session, appended: _appended, ...delivery } = await promptSession(p, rt, id, body, by);
  return { dispatched: true, gate, ...delivery };
}

/**
 * A harness whose agent reads no prose (`shell`) never receives the merge prompt (it would run as
 * commands): the merge is refused, before any transition, with the git commands to run instead.
 */
function mergeRefusal(state: SessionState, trunk: string, main: string): void {
  if (adapterOf(state.harness).readsProse) return;
  const hand = mergeByHand(main, trunk, state.branch);
  throw new TrellisError(
    'SESSION_REFUSED',
    `a ${state.harness} session has no agent that reads prose, so nothing is typed into it: merge it by hand in the main checkout, ${hand.main}:\n` +
      `${hand.commands}\nthen close the session (trellis session close ${state.id})`,
  );
}

/** Uncommitted work to the WIP ref, then the agent's tmux session away; the wip commit, if any. */
async function saveAndStop(rt: SessionRuntime, state: SessionState): Promise<string | null> {
  const wip = existsSync(state.worktree) ? await saveWip(state.worktree, state.id, adapterOf(state.harness).ownedPaths, state.branch) : null;
  if (state.tmux) await rt.tmux.kill(state.tmux.session);
  else await rt.tmux.kill(state.id);
  return wip;
}

/**
 * Closes a session: uncommitted work is saved to `refs/trellis/wip/<id>` first, then the tmux session and
 * the worktree are removed; the branch stays only if it holds commits. Frees a slot: runs a queue pass.
 */
export async function closeSession(p: SessionsProject, rt: SessionRuntime, id: string, by: string): Promise<SessionView> {
  const state = await sessionState(p, id);
  precheck(p, state, { type: 'close', wip: null }, by);
  await guard(p, state, 'close');
  const wip = await saveAndStop(rt, state);
  const root = mainRoot(p);
  await removeWorktree(root, state.worktree);
  if (state.base) await dropBranchIfEmpty(root, state.branch, state.base);
  const { state: after } = await appendCommand(p, id, { type: 'close', wip }, by);
  await queuePass(p, rt);
  return sessionView(after);
}

/** Holds a session aside: work saved to the WIP ref, agent stopped, worktree kept; never auto-resumed. */
export async function quarantineSession(p: SessionsProject, rt: SessionRuntime, id: string, by: string, reason = 'manual', source: SessionCommand['source'] = 'user'): Promise<SessionView> {
  const state = await sessionState(p, id);
  precheck(p, state, { type: 'quarantine', reason, wip: null }, by);
  await guard(p, state, 'quarantine');
  const wip = await saveAndStop(rt, state);
  const { state: after } = await appendCommand(p, id, { type: 'quarantine', reason, wip }, by, source);
  await queuePass(p, rt);
  return sessionView(after);
}

/** Clears `unread`: somebody has looked at the session's finished work. */
export async function viewSession(p: SessionsProject, id: string, by: string): Promise<SessionView> {
  await sessionState(p, id);
  return sessionView((await appendCommand(p, id, { type: 'view' }, by)).state);
}

/** The budget and its use, and the warm worktree pool's state and disk use, for `/api/resources`. */
export async function sessionBudget(p: SessionsProject, env: NodeJS.ProcessEnv = process.env): Promise<SessionBudget & { pool: PoolReport }> {
  return { ...budgetOf(p, (await p.sessionLog.all()).states), pool: await poolReport(p, env) };
}

export { harnessNames, queuePass, record };
export type { SessionStatus };
