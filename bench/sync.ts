import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { threadRef } from '../src/store/issues/thread-store.js';
import { openProject } from '../src/store/compose/open-project.js';
import { generateThreads } from './generate.js';
import { exec, report, round, time } from './lib.js';

const BIN = join(import.meta.dirname, '../src/cli/bin.js');
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', maxBuffer: 1 << 28 });

/**
 * Issue 14's targets: `trellis sync` of 1,000 threads of which 100 diverged (a reply on each side), end
 * to end through the CLI against a bare remote on disk, ≤ 5 s; `trellis issues export` and `import` of
 * 10,000 threads / 50,000 events, ≤ 5 s each.
 */
export async function syncBench(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'trellis-bench-sync-'));
  const env = { ...process.env, TRELLIS_HOME: join(root, 'home') };
  const trellis = (cwd: string, args: string[]) => exec(process.execPath, [BIN, ...args], cwd, env);
  try {
    const remote = join(root, 'remote.git');
    const a = join(root, 'a');
    const b = join(root, 'b');
    git(root, 'init', '-q', '--bare', remote);
    for (const dir of [a, b]) {
      git(root, 'init', '-q', '-b', 'main', dir);
      git(dir, 'config', 'user.name', 'Bench');
      git(dir, 'config', 'user.email', 'bench@example.com');
      git(dir, 'remote', 'add', 'origin', remote);
    }
    const ids = await generateThreads(a, 1_000, 5_000);
    await trellis(a, ['sync']);
    const adopt = await time(() => trellis(b, ['sync', '--json']));
    const adopted = JSON.parse(adopt.value).adopted.length;
    // 100 threads diverge: a reply on each clone, a's pushed first.
    const diverged = ids.slice(0, 100);
    for (const [dir, who] of [
      [a, 'ann'],
      [b, 'bob'],
    ] as const) {
      const p = openProject(dir);
      for (const id of diverged) await p.threads.write(id, { type: 'reply', body: `offline reply by ${who}`, evidence: [], by: who, at: new Date().toISOString() });
    }
    await trellis(a, ['sync']);
    const sync = await time(() => trellis(b, ['sync', '--json']));
    const summary = JSON.parse(sync.value);
    const tip = git(b, 'rev-parse', threadRef(diverged[0]!)).trim();
    report('sync-1000-threads-100-diverged', {
      threads: 1_000,
      diverged: 100,
      ms: round(sync.ms),
      merged: summary.merged.length,
      pushed: summary.pushed.length,
      merge_parents: git(b, 'rev-list', '--parents', '-n', '1', tip).trim().split(' ').length - 1,
      adopt_1000_ms: round(adopt.ms),
      adopted,
      target_ms: 5_000,
    });

    // Export and import of 10,000 threads / 50,000 events.
    const big = join(root, 'big');
    const empty = join(root, 'empty');
    for (const dir of [big, empty]) {
      git(root, 'init', '-q', '-b', 'main', dir);
      git(dir, 'config', 'user.name', 'Bench');
    }
    await generateThreads(big, 10_000, 50_000);
    const exported = await time(() => trellis(big, ['issues', 'export']));
    const file = join(root, 'threads.ndjson');
    writeFileSync(file, exported.value);
    const imported = await time(() => trellis(empty, ['issues', 'import', file, '--json']));
    const again = await time(() => trellis(empty, ['issues', 'import', file, '--json']));
    report('export-import-10000-threads-50000-events', {
      threads: 10_000,
      events: 50_000,
      export_ms: round(exported.ms),
      export_lines: exported.value.split('\n').length - 1,
      import_ms: round(imported.ms),
      imported: JSON.parse(imported.value),
      import_again_ms: round(again.ms),
      imported_again: JSON.parse(again.value).events,
      same_list: (await trellis(big, ['issues', '--json'])) === (await trellis(empty, ['issues', '--json'])),
      target_ms: 5_000,
    });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
