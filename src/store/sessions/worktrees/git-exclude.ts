import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import { TrellisError } from '../../../events/index.js';
import { gitRaw } from '../../git/run-git.js';

/**
 * Keeps a file Trellis writes into a worktree (an adapter's hooks) out of the agent's work: its path
 * goes into the repository's exclude file (`git rev-parse --git-path info/exclude`, which a linked
 * worktree shares with its main checkout), so `git add -A` never picks it up. Appended once.
 */
export async function excludeFromGit(worktree: string, path: string): Promise<void> {
  const r = await gitRaw(worktree, ['rev-parse', '--git-path', 'info/exclude']);
  if (r.code !== 0) throw new TrellisError('SPAWN_FAILED', `cannot find the git exclude file of ${worktree}: ${r.stderr.trim()}`);
  const out = r.stdout.trim();
  const file = isAbsolute(out) ? out : join(worktree, out);
  const pattern = `/${path}`;
  const text = await readFile(file, 'utf8').catch(() => '');
  if (text.split('\n').some((line) => line.trim() === pattern)) return;
  await mkdir(dirname(file), { recursive: true });
  await appendFile(file, `${text === '' || text.endsWith('\n') ? '' : '\n'}# written by Trellis for its sessions (agent hooks)\n${pattern}\n`);
}
