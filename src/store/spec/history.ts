import { TrellisError } from '../../events/index.js';
import type { SpecDiff, SpecVersion } from '../../projections/spec-version.js';
import { git, gitRaw } from '../git/run-git.js';

export type { SpecDiff, SpecVersion };

const CHANGE: Record<string, SpecVersion['change']> = { A: 'added', M: 'modified', R: 'renamed', D: 'deleted', C: 'copied', T: 'modified' };

/** A node's timeline, newest first, following renames (`git log --follow`). */
export async function specHistory(root: string, path: string): Promise<SpecVersion[]> {
  const out = await git(root, ['log', '--follow', '-M', '--format=%x1e%H%x1f%an%x1f%aI%x1f%s', '--name-status', '--', path]);
  const versions: SpecVersion[] = [];
  for (const record of out.split('\x1e').slice(1)) {
    const [header, ...rest] = record.split('\n');
    const [hash, author, date, subject] = header!.split('\x1f') as [string, string, string, string];
    const status = rest.find((l) => l.trim() !== '')?.split('\t') ?? [];
    const letter = status[0]?.[0] ?? 'M';
    const renamed = letter === 'R' || letter === 'C';
    versions.push({
      hash,
      author,
      date,
      subject,
      path: (renamed ? status[2] : status[1]) ?? path,
      ...(renamed && status[1] ? { previousPath: status[1] } : {}),
      change: CHANGE[letter] ?? 'modified',
    });
  }
  return versions;
}

/** The line diff a version made to the node's file. `hash` may be abbreviated; it must be in the history. */
export async function specDiff(root: string, path: string, hash: string): Promise<SpecDiff> {
  if (!/^[0-9a-f]{4,40}$/.test(hash)) throw new TrellisError('VERSION_NOT_FOUND', `'${hash}' is not a commit hash`);
  const version = (await specHistory(root, path)).find((v) => v.hash.startsWith(hash));
  if (!version) throw new TrellisError('VERSION_NOT_FOUND', `${path} has no version ${hash}`);
  const paths = [version.path, ...(version.previousPath ? [version.previousPath] : [])];
  const r = await gitRaw(root, ['show', '--format=', '--no-color', '--no-ext-diff', '-M', version.hash, '--', ...paths]);
  if (r.code !== 0) throw new TrellisError('GIT_FAILED', `git show failed: ${r.stderr.trim()}`);
  // The file as it read in that version, so a page can show the old text itself, not only the change.
  const shown = version.change === 'deleted' ? null : await gitRaw(root, ['show', '--no-color', `${version.hash}:${version.path}`]);
  const text = shown && shown.code === 0 ? shown.stdout : null;
  return { hash: version.hash, path: version.path, ...(version.previousPath ? { previousPath: version.previousPath } : {}), change: version.change, ...countLines(r.stdout), diff: r.stdout, text };
}

export function countLines(diff: string): { additions: number; deletions: number } {
  let additions = 0;
  let deletions = 0;
  for (const line of diff.split('\n')) {
    if (line.startsWith('+') && !line.startsWith('+++')) additions++;
    else if (line.startsWith('-') && !line.startsWith('---')) deletions++;
  }
  return { additions, deletions };
}
