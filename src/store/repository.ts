import { spawnSync } from 'node:child_process';
import { userInfo } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import { TrellisError } from '../events/index.js';

export interface Repository {
  /** The common git dir: refs and objects shared by every worktree of the repository. */
  readonly gitdir: string;
  /** The working tree's toplevel; null in a bare repository. */
  readonly root: string | null;
}

/**
 * Finds the repository containing `cwd` the way git does (GIT_DIR, linked worktrees, bare repositories
 * included), by asking git itself.
 */
export function findRepository(cwd: string): Repository {
  const out = spawnSync('git', ['rev-parse', '--git-common-dir', '--is-bare-repository', '--show-toplevel'], { cwd, encoding: 'utf8' });
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
  const out = spawnSync('git', ['config', 'user.name'], { cwd, encoding: 'utf8' });
  const name = out.status === 0 ? out.stdout.trim() : '';
  if (name) return name;
  try {
    return userInfo().username || null;
  } catch {
    return null;
  }
}
