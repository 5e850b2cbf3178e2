import { lstatSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Variables that steer git's own discovery: with any of them set, only git can say where the repository is. */
const STEERING = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_COMMON_DIR', 'GIT_CEILING_DIRECTORIES', 'GIT_DISCOVERY_ACROSS_FILESYSTEM', 'GIT_CONFIG_PARAMETERS', 'GIT_CONFIG_COUNT'];

/** Config that moves the working tree or makes the repository bare (or may, through an include). */
const STEERING_CONFIG = /^\s*(worktree(config)?\s*=|bare\s*=\s*true\b|\[include)/im;

/**
 * The repository containing `cwd`, found without a git process (~5 ms of every CLI verb), for the common
 * layout only: a working tree whose `.git` is a directory of this user's, no variable or config steering
 * discovery, no mount point crossed. Anything else (a linked worktree's `.git` file, a bare repository,
 * `cwd` inside a git dir, GIT_DIR, core.worktree, another owner, no repository at all) answers undefined,
 * and the caller asks git itself, which stays the authority on every unusual case.
 */
export function discoverRepository(cwd: string, env: NodeJS.ProcessEnv = process.env): { gitdir: string; root: string } | undefined {
  if (STEERING.some((name) => env[name] !== undefined)) return undefined;
  const uid = process.getuid?.();
  if (uid === undefined) return undefined;
  let dir: string;
  try {
    dir = realpathSync(cwd);
  } catch {
    return undefined;
  }
  const device = statSync(dir).dev;
  for (;;) {
    const dot = statOrNull(join(dir, '.git'));
    if (dot) return dot.isDirectory() ? plainRepository(dir, uid) : undefined;
    // A HEAD here: a bare repository or a git dir itself; git decides what that means.
    if (statOrNull(join(dir, 'HEAD'))) return undefined;
    const up = dirname(dir);
    if (up === dir) return undefined;
    if (statSync(up).dev !== device) return undefined;
    dir = up;
  }
}

function plainRepository(root: string, uid: number): { gitdir: string; root: string } | undefined {
  const gitdir = join(root, '.git');
  // A `commondir` file: a linked worktree's git dir in the main one's place; no HEAD: not a repository.
  if (statOrNull(join(gitdir, 'commondir')) || !statOrNull(join(gitdir, 'HEAD'))) return undefined;
  // git refuses a repository another user owns (safe.directory); leave that refusal to git.
  if (statSync(root).uid !== uid || statSync(gitdir).uid !== uid) return undefined;
  let config: string;
  try {
    config = readFileSync(join(gitdir, 'config'), 'utf8');
  } catch {
    return undefined;
  }
  return STEERING_CONFIG.test(config) ? undefined : { gitdir, root };
}

function statOrNull(path: string): ReturnType<typeof lstatSync> | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}
