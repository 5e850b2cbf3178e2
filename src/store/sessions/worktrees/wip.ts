import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childProcess } from '../../lazy-builtins.js';
import { TrellisError } from '../../../events/index.js';
import { streamRef } from '../../streams/stream-names.js';

export const wipRef = (id: string): string => streamRef('wip', id);

function gitIn(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    childProcess().execFile('git', args, { cwd, env, encoding: 'utf8', maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new TrellisError('CLEANUP_REFUSED', `cannot save the work in ${cwd}: git ${args[0]} failed: ${stderr.trim() || err.message}`));
      else resolve(stdout);
    });
  });
}

/**
 * The WIP rule (DESIGN.md §9): commits everything uncommitted in the worktree — staged, unstaged and
 * new untracked files (ignored ones excepted) — onto `refs/trellis/wip/<id>`, parented on HEAD.
 * Uses a temporary index, so the worktree's own index and files are never touched. Returns the commit,
 * or null when there was nothing beyond HEAD to save. `exclude`: files the adapter wrote (its hooks), not work. A failure throws: no cleanup may follow it.
 */
export async function saveWip(worktree: string, id: string, exclude: readonly string[] = [], branch?: string): Promise<string | null> {
  const index = join(tmpdir(), `trellis-wip-${id}-${randomBytes(6).toString('hex')}`);
  const env = { ...process.env, GIT_INDEX_FILE: index };
  try {
    await gitIn(worktree, ['read-tree', 'HEAD'], env);
    await gitIn(worktree, ['add', '--all', '--', '.'], env);
    // The adapter's files back to what HEAD holds (an exclude pathspec naming a git-ignored file fails the add).
    if (exclude.length) await gitIn(worktree, ['reset', '-q', 'HEAD', '--', ...exclude.map((p) => `:(literal)${p}`)], env);
    const tree = (await gitIn(worktree, ['write-tree'], env)).trim();
    const head = (await gitIn(worktree, ['rev-parse', 'HEAD^{tree}'], env)).trim();
    if (tree === head) {
      // Nothing uncommitted; but commits on a HEAD the branch does not hold (a detached HEAD, another
      // branch checked out there) would be on no ref once the worktree goes: keep that HEAD.
      const at = (await gitIn(worktree, ['rev-parse', 'HEAD'], env)).trim();
      const tip = branch ? (await gitIn(worktree, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], env).catch(() => '')).trim() : at;
      if (at === tip) return null;
      await gitIn(worktree, ['update-ref', wipRef(id), at], env);
      return at;
    }
    const commit = (
      await gitIn(worktree, ['commit-tree', tree, '-p', 'HEAD', '-m', `wip: uncommitted work of session ${id}`], {
        ...env,
        GIT_AUTHOR_NAME: 'trellis',
        GIT_AUTHOR_EMAIL: 'trellis@localhost',
        GIT_COMMITTER_NAME: 'trellis',
        GIT_COMMITTER_EMAIL: 'trellis@localhost',
      })
    ).trim();
    await gitIn(worktree, ['update-ref', wipRef(id), commit], env);
    return commit;
  } finally {
    rmSync(index, { force: true });
  }
}
