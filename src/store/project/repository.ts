import { userInfo } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import { TrellisError } from '../../events/index.js';
import { discoverRepository } from './git-discovery.js';
import { childProcess } from '../lazy-builtins.js';

export interface Repository {
  /** The common git dir: refs and objects shared by every worktree of the repository. */
  readonly gitdir: string;
  /** The working tree's toplevel; null in a bare repository. */
  readonly root: string | null;
}

/** The working tree's toplevel; a bare repository has none, and the spec tree needs one. */
export function requireRoot(p: Repository): string {
  if (!p.root) throw new TrellisError('NOT_A_REPOSITORY', `${p.gitdir} is a bare repository: the spec tree needs a working tree`);
  return p.root;
}

/**
 * Finds the repository containing `cwd` the way git does (GIT_DIR, linked worktrees, bare repositories
 * included): the plain layout without a git process (see discoverRepository), every other by asking git.
 */
export function findRepository(cwd: string): Repository {
  const plain = discoverRepository(cwd);
  if (plain) return plain;
  const out = childProcess().spawnSync('git', ['rev-parse', '--git-common-dir', '--is-bare-repository', '--show-toplevel'], { cwd, encoding: 'utf8' });
  if (out.error) throw new TrellisError('GIT_FAILED', `cannot run git: ${out.error.message}; install git and make sure it is on PATH`);
  if (out.status !== 0) {
    throw new TrellisError('NOT_A_REPOSITORY', `${cwd} is not inside a git repository; run 'git init' there, or cd into your project`);
  }
  const [commonDir, bare, toplevel] = out.stdout.split('\n');
  const gitdir = isAbsolute(commonDir!) ? commonDir! : resolve(cwd, commonDir!);
  return { gitdir, root: bare === 'true' || !toplevel ? null : toplevel };
}

/** git's `user.name` as configured for this repository, else the OS user, else null. */
export function gitUserName(cwd: string): string | null {
  const out = childProcess().spawnSync('git', ['config', 'user.name'], { cwd, encoding: 'utf8' });
  const name = out.status === 0 ? out.stdout.trim() : '';
  if (name) return name;
  try {
    return userInfo().username || null;
  } catch {
    return null;
  }
}
