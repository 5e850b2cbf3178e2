import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, git, tempDir, tempRepo } from '../../../test/helpers/repo.js';
import { TrellisError } from '../../events/index.js';
import { encodeProject } from '../trellis-home.js';
import { forgetProject } from './forget-project.js';
import { addToCatalog, readCatalog } from './project-catalog.js';

afterAll(cleanupRepos);

const codeOf = (p: Promise<unknown>) => p.then(() => 'accepted', (err: unknown) => (err instanceof TrellisError ? err.code : String(err)));

describe('forgetProject', () => {
  it('forgets by id or by a path inside the project (a linked worktree too), and only that entry', async () => {
    const home = tempDir();
    const [a, b] = [tempRepo(), tempRepo()];
    const wt = join(tempDir(), 'wt');
    git(b, 'worktree', 'add', '-q', wt, '-b', 'side');
    await addToCatalog(home, a, new Date());
    await addToCatalog(home, b, new Date());
    expect(await forgetProject(home, { path: wt })).toMatchObject({ id: encodeProject(b), root: b });
    expect(readCatalog(home).entries.map((e) => e.root)).toEqual([a]);
    expect(await forgetProject(home, { id: encodeProject(a) })).toMatchObject({ root: a });
    expect(readCatalog(home).entries).toEqual([]);
  });

  it('an uncataloged project is NOT_FOUND; a malformed catalog is CATALOG_MALFORMED and left as it is', async () => {
    const home = tempDir();
    expect(await codeOf(forgetProject(home, { id: 'nobody-000000000000' }))).toBe('NOT_FOUND');
    expect(await codeOf(forgetProject(home, { path: '/no/such/dir' }))).toBe('NOT_FOUND');
    writeFileSync(join(home, 'projects.json'), '{"version": 2}');
    expect(await codeOf(forgetProject(home, { id: 'nobody-000000000000' }))).toBe('CATALOG_MALFORMED');
    expect(readFileSync(join(home, 'projects.json'), 'utf8')).toBe('{"version": 2}');
  });
});
