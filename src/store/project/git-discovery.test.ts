import { mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, git, tempDir, tempRepo } from '../../../test/helpers/repo.js';
import { discoverRepository } from './git-discovery.js';
import { findRepository } from './repository.js';

afterAll(cleanupRepos);

const env = {};

/** git's own answer, as findRepository read it before discovery existed. */
function gitsAnswer(cwd: string): { gitdir: string; root: string | null } {
  const [common, bare, top] = git(cwd, 'rev-parse', '--path-format=absolute', '--git-common-dir', '--is-bare-repository', '--show-toplevel').split('\n');
  return { gitdir: realpathSync(common!), root: bare === 'true' || !top ? null : realpathSync(top) };
}

describe('discoverRepository', () => {
  it('finds a plain repository from its root, a subfolder and through a symlink, as git does', () => {
    const repo = tempRepo();
    mkdirSync(join(repo, 'a', 'b'), { recursive: true });
    const link = join(tempDir(), 'link');
    symlinkSync(join(repo, 'a'), link);
    for (const cwd of [repo, join(repo, 'a', 'b'), link]) {
      expect(discoverRepository(cwd, env)).toEqual(gitsAnswer(cwd));
      expect(findRepository(cwd)).toEqual(gitsAnswer(cwd));
    }
  });

  it('leaves every unusual layout to git (and findRepository still answers what git answers)', () => {
    const repo = tempRepo();
    const linked = join(tempDir(), 'wt');
    git(repo, 'worktree', 'add', '-q', '-b', 'side', linked);
    const bare = join(tempDir(), 'bare.git');
    git(repo, 'clone', '-q', '--bare', repo, bare);
    const moved = tempRepo();
    const tree = tempDir();
    git(moved, 'config', 'core.worktree', tree);
    for (const cwd of [linked, bare, join(repo, '.git'), join(repo, '.git', 'refs'), moved]) {
      expect(discoverRepository(cwd, env), cwd).toBeUndefined();
    }
    // (In a bare repository or a git dir, git's --show-toplevel fails: findRepository refuses those, as it always did.)
    for (const cwd of [linked, moved]) expect(findRepository(cwd), cwd).toEqual(gitsAnswer(cwd));
    expect(findRepository(moved).root).toBe(realpathSync(tree));
  });

  it('leaves discovery to git when a variable steers it', () => {
    const repo = tempRepo();
    for (const name of ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_CEILING_DIRECTORIES', 'GIT_CONFIG_COUNT']) {
      expect(discoverRepository(repo, { [name]: '/elsewhere' }), name).toBeUndefined();
    }
    expect(discoverRepository(repo, { GIT_AUTHOR_NAME: 'someone' })).toEqual(gitsAnswer(repo));
  });

  it('finds nothing outside a repository, and findRepository names the problem', () => {
    const outside = tempDir();
    expect(discoverRepository(outside, env)).toBeUndefined();
    expect(() => findRepository(outside)).toThrow(/is not inside a git repository/);
  });
});
