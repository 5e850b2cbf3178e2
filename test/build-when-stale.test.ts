import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, ROOT, tempDir } from './helpers/repo.js';

afterAll(cleanupRepos);

/**
 * build-when-stale.mjs in a folder laid out like the clone, whose `npm run build` only counts its runs and
 * writes the outputs the script looks for.
 */
function fakeClone(): { dir: string; builds: () => number; run: () => string } {
  const dir = tempDir();
  for (const d of ['src/cli', 'bench', 'test/forge', 'test/fake-model', 'test/push']) mkdirSync(join(dir, d), { recursive: true });
  for (const f of ['src/cli/bin.ts', 'bench/run.ts', 'test/fake-model/server.ts', 'package-lock.json', 'tsconfig.json', 'cli.rolldown.config.mjs']) writeFileSync(join(dir, f), '');
  const build = `const fs=require('fs');for(const f of ['dist/src/cli/bin.js','dist/cli/run.js','dist/dashboard/index.html']){fs.mkdirSync(require('path').dirname(f),{recursive:true});fs.writeFileSync(f,'')}fs.appendFileSync('builds','x')`;
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'fake', scripts: { build: `node -e "${build}"` } }));
  copyFileSync(join(ROOT, 'build-when-stale.mjs'), join(dir, 'build-when-stale.mjs'));
  const builds = () => {
    try {
      return readFileSync(join(dir, 'builds'), 'utf8').length;
    } catch {
      return 0;
    }
  };
  return { dir, builds, run: () => execFileSync(process.execPath, ['build-when-stale.mjs'], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }) };
}

describe('build-when-stale.mjs (prepare and pretest)', () => {
  it('builds once for the same inputs, and again after a file is edited, added or removed, or an output is gone', () => {
    const c = fakeClone();
    c.run();
    expect(c.builds()).toBe(1);
    expect(c.run()).toContain('dist/ is current');
    expect(c.builds()).toBe(1);

    const later = new Date(Date.now() + 60_000);
    utimesSync(join(c.dir, 'src/cli/bin.ts'), later, later);
    c.run();
    expect(c.builds()).toBe(2);

    writeFileSync(join(c.dir, 'test/push/new.ts'), '');
    c.run();
    expect(c.builds()).toBe(3);

    // A removed file: the folder's own time may not move within its clock's resolution; the count does.
    rmSync(join(c.dir, 'bench/run.ts'));
    utimesSync(join(c.dir, 'bench'), later, later);
    c.run();
    expect(c.builds()).toBe(4);

    rmSync(join(c.dir, 'dist/cli/run.js'));
    c.run();
    expect(c.builds()).toBe(5);
    expect(c.run()).toContain('dist/ is current');
    expect(c.builds()).toBe(5);
  });
});
