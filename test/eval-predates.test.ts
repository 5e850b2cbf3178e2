import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, git, ok, tempRepo } from './helpers/repo.js';

afterAll(cleanupRepos);

// Issue 39: after a merge that changes trunk, trunk's readings predate it, and every surface says so
// plainly (the scoreboard's words, here the CLI's; the page's in dashboard-gate.test.ts).
describe('trunk readings after a merge', () => {
  it('say they predate trunk’s tip, with the tip and the commit they were measured at, until trunk is measured again', async () => {
    const dir = tempRepo();
    mkdirSync(join(dir, 'specs'), { recursive: true });
    writeFileSync(join(dir, 'specs/import.md'), '---\nscenarios:\n  - { id: import/csv, run: "grep -qx It.reads.CSV. specs/import.md" }\n---\n# Import\n');
    writeFileSync(join(dir, 'trellis.json'), '{}\n');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-qm', 'spec');
    await ok(dir, ['eval', 'run', 'import/csv']);
    const measured = git(dir, 'rev-parse', 'HEAD').trim();
    expect(await ok(dir, ['eval', 'ls'])).not.toContain('predates');

    // A branch fixes it and is merged into trunk.
    git(dir, 'checkout', '-qb', 'fix');
    writeFileSync(join(dir, 'specs/import.md'), '---\nscenarios:\n  - { id: import/csv, run: "grep -qx It.reads.CSV. specs/import.md" }\n---\n# Import\n\nIt reads CSV.\n');
    git(dir, 'commit', '-qam', 'reads CSV');
    git(dir, 'checkout', '-q', 'main');
    git(dir, 'merge', '--no-ff', '-q', '-m', 'merge fix', 'fix');
    const tip = git(dir, 'rev-parse', 'HEAD').trim();

    const board = await ok(dir, ['eval', 'ls']);
    expect(board).toContain(`(predates trunk's tip ${tip.slice(0, 8)}: measured at ${measured.slice(0, 8)}, before trunk moved (a merge or a commit); run it again to measure the tip)`);
    expect(board).toMatch(/trunk +fail /);

    // Measured again: the words go.
    await ok(dir, ['eval', 'run', 'import/csv']);
    const after = await ok(dir, ['eval', 'ls']);
    expect(after).not.toContain('predates');
    expect(after).toMatch(/trunk +pass /);
  });
});
