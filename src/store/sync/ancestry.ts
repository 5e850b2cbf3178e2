import { TrellisError } from '../../events/index.js';
import { gitRaw } from '../git/run-git.js';

/** Whether `ancestor` is `descendant` or one of its ancestors (`git merge-base --is-ancestor`). */
export async function isAncestor(gitdir: string, ancestor: string, descendant: string): Promise<boolean> {
  if (ancestor === descendant) return true;
  const r = await gitRaw(gitdir, ['--git-dir', gitdir, 'merge-base', '--is-ancestor', ancestor, descendant]);
  if (r.code === 0) return true;
  if (r.code === 1) return false;
  throw new TrellisError('GIT_FAILED', `git merge-base failed: ${r.stderr.trim()}`);
}
