import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { TrellisError } from '../../events/index.js';
import { nodeIdOf, parseSpecNode } from '../../projections/spec-node.js';
import { readYaml } from './read-yaml.js';
import { git, gitRaw } from '../git/run-git.js';
import { branchTip, parsePorcelain, readWorktreeRecords } from '../git/worktree-records.js';
import { untouchedSince } from '../git/untouched-subtree.js';
import { countLines } from './history.js';
import { isBelow, unsafeRelativePath } from '../safe-path.js';

/**
 * Whether `path` is a pooled worktree (the board and the eval scopes leave them out). The folder is the
 * session pool's (`poolDir` in `sessions/pool-entries.ts`); the spec room says which worktrees count.
 */
export const isPooledPath = (path: string): boolean => /[\\/]\.pool[\\/][^\\/]+$/.test(path);

export interface Worktree {
  readonly path: string;
  readonly head: string | null;
  readonly branch: string | null;
  readonly main: boolean;
}

/**
 * The repository's worktrees, the main checkout first: read from the git dir when `gitdir` (the common
 * one) is given and its layout is the common one (git/worktree-records.ts), else `git worktree list --porcelain`.
 */
export async function listWorktrees(cwd: string, gitdir?: string): Promise<Worktree[]> {
  const records = (gitdir === undefined ? undefined : readWorktreeRecords(gitdir)) ?? parsePorcelain(await git(cwd, ['worktree', 'list', '--porcelain']));
  return records
    .map((r, i) => ({ path: r.path, head: r.head, branch: r.branch?.replace(/^refs\/heads\//, '') ?? null, main: i === 0 }))
    .filter((w) => !w.path.endsWith('.git') || existsSync(join(w.path, '.git')))
    // The warm pool's worktrees hold no work of their own (DESIGN.md §15): not part of the board.
    .filter((w) => !isPooledPath(w.path));
}

/** The trunk worktrees fork from: `trunk` in trellis.json, else the main checkout's branch. */
export function trunkOf(worktrees: readonly Worktree[], configured: string | null): string | null {
  return configured ?? worktrees.find((w) => w.main)?.branch ?? null;
}

/** Where `worktree` forked from trunk: merge-base of its HEAD and trunk; its own HEAD when there is no trunk. */
export async function forkPoint(worktree: Worktree, trunk: string | null): Promise<string | null> {
  if (!worktree.head) return null;
  if (!trunk) return worktree.head;
  const r = await gitRaw(worktree.path, ['merge-base', 'HEAD', `refs/heads/${trunk}`]);
  return r.code === 0 ? r.stdout.trim() : worktree.head;
}

export interface OverlayEntry {
  readonly worktree: string;
  readonly branch: string | null;
  readonly head: string | null;
  readonly forkPoint: string | null;
  /** Nodes this worktree has changed since its fork point: committed, staged, unstaged or new. */
  readonly nodes: readonly string[];
  /**
   * Of those, the nodes whose file the worktree adds (new since its fork point), with the title the file
   * gives and its path: what the board shows of a node that exists only in a worktree. Absent when none.
   */
  readonly added?: readonly AddedNode[];
}

export interface AddedNode {
  readonly id: string;
  readonly title: string;
  readonly path: string;
}

/** Whether the repository has linked worktrees, read from `<gitdir>/worktrees` without spawning git. */
export function hasLinkedWorktrees(gitdir: string): boolean {
  try {
    return readdirSync(join(gitdir, 'worktrees')).length > 0;
  } catch {
    return false;
  }
}

/** The per-worktree overlay of the board: linked worktrees only, each with the nodes it changed. */
export async function worktreeOverlay(cwd: string, gitdir: string, specRoot: string, configuredTrunk: string | null): Promise<OverlayEntry[]> {
  if (!hasLinkedWorktrees(gitdir)) return [];
  const worktrees = await listWorktrees(cwd, gitdir);
  const trunk = trunkOf(worktrees, configuredTrunk);
  // A worktree still at trunk's tip forked there (the merge base of a commit and itself): no merge-base run.
  const tip = trunk ? branchTip(gitdir, trunk) : null;
  return Promise.all(
    worktrees
      .filter((w) => !w.main)
      // A worktree being made or removed cannot be diffed yet: it shows with no changes, never as an error.
      .map((w) => {
        const fork = tip && w.head === tip ? tip : undefined;
        // Forked at its own HEAD and nothing under the spec root touched since (read from its index and
        // the disk, git/untouched-subtree.ts): what the two git listings would find, without running them.
        if (fork && untouchedSince(w.path, gitdir, fork, specRoot)) return Promise.resolve(unchangedEntry(w, fork));
        return overlayEntry(w, trunk, specRoot, fork).catch(() => undiffedEntry(w));
      }),
  );
}

/** A worktree with no spec changes since its fork point (what overlayEntry answers when git lists none). */
const unchangedEntry = (w: Worktree, fork: string): OverlayEntry => ({ worktree: w.path, branch: w.branch, head: w.head, forkPoint: fork, nodes: [] });

/** A worktree that cannot be diffed yet (being made or removed), shown with no changes. */
export const undiffedEntry = (w: Worktree): OverlayEntry => ({ worktree: w.path, branch: w.branch, head: w.head, forkPoint: null, nodes: [] });

/**
 * What one linked worktree changed under the spec root since its fork point. `fork`, when the caller
 * already knows it for this HEAD and trunk tip, saves the merge-base run; the two listings run together.
 */
export async function overlayEntry(w: Worktree, trunk: string | null, specRoot: string, fork?: string | null): Promise<OverlayEntry> {
  const diffFrom = (base: string | null) => (base ? git(w.path, ['diff', '--name-status', '--no-renames', base, '--', specRoot]) : Promise.resolve(''));
  const untrackedRead = git(w.path, ['ls-files', '--others', '--exclude-standard', '--', specRoot]);
  // Awaited below; a failure meanwhile is that await's to report, not an unhandled rejection.
  untrackedRead.catch(() => {});
  let base: string | null;
  let changed: string;
  if (fork === undefined && w.head && trunk) {
    // The merge base and the diff from it run together (issue 40: the board waited for one, then the
    // other): `diff --merge-base` diffs from the same merge base of HEAD and trunk. Where there is none
    // (or git predates 2.30's --merge-base), forkPoint's fallback (HEAD) is diffed from, as before.
    const [merge, merged] = await Promise.all([
      gitRaw(w.path, ['merge-base', 'HEAD', `refs/heads/${trunk}`]),
      gitRaw(w.path, ['diff', '--name-status', '--no-renames', '--merge-base', `refs/heads/${trunk}`, '--', specRoot]),
    ]);
    base = merge.code === 0 ? merge.stdout.trim() : w.head;
    changed = merge.code === 0 && merged.code === 0 ? merged.stdout : await diffFrom(base);
  } else {
    base = fork === undefined ? await forkPoint(w, trunk) : fork;
    changed = await diffFrom(base);
  }
  const untracked = await untrackedRead;
  const nodes = new Set<string>();
  const added = new Map<string, string>();
  const idOf = (p: string) => (p.startsWith(`${specRoot}/`) ? nodeIdOf(p.slice(specRoot.length + 1)) : null);
  // `--name-status` lines are `<status>\t<path>`; an untracked file is new as well.
  const entries = [...changed.split('\n').map((l) => [l.slice(0, l.indexOf('\t')), l.slice(l.indexOf('\t') + 1)] as const), ...untracked.split('\n').map((p) => ['A', p] as const)];
  for (const [status, p] of entries) {
    const id = idOf(p);
    if (!id) continue;
    nodes.add(id);
    if (status === 'A') added.set(id, p);
  }
  const entry = { worktree: w.path, branch: w.branch, head: w.head, forkPoint: base, nodes: [...nodes].sort() };
  if (!added.size) return entry;
  return { ...entry, added: [...added].sort(([a], [b]) => (a < b ? -1 : 1)).map(([id, path]) => ({ id, title: titleIn(w.path, id, path), path })) };
}

/** The title an added node's file gives (its front matter's, else its first heading, else its name). */
function titleIn(worktree: string, id: string, path: string): string {
  let text = '';
  try {
    // Only a file below the worktree (symlinks resolved) is read: never a title from elsewhere.
    if (isBelow(worktree, join(worktree, path))) text = readFileSync(join(worktree, path), 'utf8');
  } catch {
    // Staged and then removed from disk: named by its id.
  }
  return parseSpecNode(id, path, text, () => null, readYaml).title;
}

export interface EditDelta {
  readonly node: string;
  readonly worktree: string;
  readonly forkPoint: string | null;
  readonly path: string;
  readonly state: 'added' | 'modified' | 'deleted' | 'unchanged';
  readonly additions: number;
  readonly deletions: number;
  readonly diff: string;
}

/**
 * A node's in-flight delta in one worktree: its working-tree file against the worktree's fork point. A
 * new untracked node is an all-additions diff.
 */
export async function editDelta(cwd: string, opts: { node: string; path: string; specRoot: string; worktree?: string; trunk: string | null }): Promise<EditDelta> {
  const worktrees = await listWorktrees(cwd);
  const wt = opts.worktree === undefined ? worktrees.find((w) => w.main) : worktrees.find((w) => w.path === resolve(opts.worktree!) || w.branch === opts.worktree);
  if (!wt) throw new TrellisError('NOT_FOUND', `no worktree '${opts.worktree}'; 'git worktree list' shows them`);
  // The node's file must stay below the worktree's spec root, symlinks resolved: never bytes from elsewhere.
  if (!isBelow(join(wt.path, opts.specRoot), join(wt.path, opts.path)) || !(opts.specRoot === '.' || opts.path.startsWith(`${opts.specRoot}/`)) || unsafeRelativePath(opts.path)) {
    throw new TrellisError('NODE_NOT_FOUND', `no spec node '${opts.node}' in ${wt.path}`);
  }
  const fork = await forkPoint(wt, trunkOf(worktrees, opts.trunk));
  const atFork = fork ? (await gitRaw(wt.path, ['cat-file', '-e', `${fork}:${opts.path}`])).code === 0 : false;
  const onDisk = existsSync(join(wt.path, opts.path));
  let diff = '';
  if (atFork) diff = await git(wt.path, ['diff', '--no-color', '--no-ext-diff', fork!, '--', opts.path]);
  else if (onDisk) diff = (await gitRaw(wt.path, ['diff', '--no-color', '--no-ext-diff', '--no-index', '--', '/dev/null', opts.path])).stdout;
  const state = !atFork && onDisk ? 'added' : atFork && !onDisk ? 'deleted' : diff ? 'modified' : 'unchanged';
  return { node: opts.node, worktree: wt.path, forkPoint: fork, path: opts.path, state, ...countLines(diff), diff };
}
