import { childProcess } from '../../lazy-builtins.js';
import { cpSync, existsSync, mkdirSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { TrellisError } from '../../../events/index.js';
import { encodeProject, trellisHome } from '../../trellis-home.js';
import { git, gitRaw } from '../../git/run-git.js';
import type { ProjectContext } from '../../project/context.js';

/** The main checkout of the project (sessions fork from it even when a verb runs inside a worktree). */
export function mainRoot(p: ProjectContext): string {
  if (basename(p.gitdir) === '.git') return dirname(p.gitdir);
  if (!p.root) throw new TrellisError('NOT_A_REPOSITORY', `${p.gitdir} is a bare repository: sessions need a working tree`);
  return p.root;
}

/** Where session `id`'s worktree lives: `$TRELLIS_HOME/worktrees/<slot>/<id>`, or below `worktreeRoot`. */
export function worktreePath(p: ProjectContext, id: string, env: NodeJS.ProcessEnv = process.env): string {
  const root = mainRoot(p);
  const configured = p.settings().worktreeRoot;
  if (configured) return join(isAbsolute(configured) ? configured : resolve(root, configured), id);
  return join(trellisHome(env), 'worktrees', encodeProject(root), id);
}

export const sessionBranch = (id: string): string => `trellis/${id}`;

/** The trunk's commit: the configured trunk branch, else the main checkout's HEAD. Refuses an empty trunk. */
export async function trunkCommit(p: ProjectContext): Promise<{ trunk: string; commit: string }> {
  const root = mainRoot(p);
  const configured = p.settings().trunk;
  const trunk = configured ?? ((await gitRaw(root, ['symbolic-ref', '--quiet', '--short', 'HEAD'])).stdout.trim() || 'HEAD');
  const r = await gitRaw(root, ['rev-parse', '--verify', '--quiet', `${trunk}^{commit}`]);
  if (r.code !== 0) {
    throw new TrellisError('NO_BASE', `the trunk '${trunk}' has no commit to fork a session from; commit something first (git commit --allow-empty -m init)`);
  }
  return { trunk, commit: r.stdout.trim() };
}

/** Adds the worktree on a new branch at `base`. */
export async function addWorktree(root: string, path: string, branch: string, base: string): Promise<void> {
  mkdirSync(dirname(path), { recursive: true });
  await git(root, ['worktree', 'add', '--quiet', '-b', branch, path, base]);
}

/**
 * Copies into the new worktree the untracked files the project's `.worktreeinclude` names (gitignore
 * syntax; typically ignored files such as `.env`). git lists them, so nothing outside the project is
 * ever copied.
 */
export async function copyIncludes(root: string, path: string): Promise<string[]> {
  if (!existsSync(join(root, '.worktreeinclude'))) return [];
  const out = await git(root, ['ls-files', '-z', '--others', '--ignored', '--exclude-from=.worktreeinclude']);
  const files = out.split('\0').filter(Boolean);
  for (const f of files) {
    mkdirSync(dirname(join(path, f)), { recursive: true });
    cpSync(join(root, f), join(path, f), { preserveTimestamps: true });
  }
  return files;
}

/** Runs the setup command in the new worktree; resolves with its exit code and combined log. */
export function runSetup(command: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number; log: Buffer }> {
  return new Promise((resolvePromise, reject) => {
    const child = childProcess().spawn('/bin/sh', ['-c', command], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => chunks.push(d));
    child.stderr.on('data', (d: Buffer) => chunks.push(d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolvePromise({ code: code ?? (signal ? 128 : 1), log: Buffer.concat(chunks) }));
  });
}

/** Removes the worktree (and git's record of it); a worktree already gone is not an error. */
export async function removeWorktree(root: string, path: string): Promise<void> {
  if (existsSync(path)) await gitRaw(root, ['worktree', 'remove', '--force', '--force', path]);
  await gitRaw(root, ['worktree', 'prune']);
}

/** Deletes the session's branch when it holds no commit beyond `base`: nothing needless is kept. */
export async function dropBranchIfEmpty(root: string, branch: string, base: string): Promise<boolean> {
  const tip = await gitRaw(root, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`]);
  if (tip.code !== 0) return true;
  if (tip.stdout.trim() !== base) return false;
  await gitRaw(root, ['branch', '-D', branch]);
  return true;
}
