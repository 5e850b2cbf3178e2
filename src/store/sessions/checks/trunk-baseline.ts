import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Reading } from '../../../events/index.js';
import { TRUNK } from '../../eval/scopes.js';
import { runDefinitions } from '../../eval/verbs.js';
import { git, gitRaw } from '../../git/run-git.js';
import type { EvalProject } from '../../eval/eval-project.js';
import { readSpecTree } from '../../spec/spec-tree.js';
import { mainRoot } from '../worktrees/worktree.js';

/**
 * Measures trunk at its tip (DESIGN.md §14, the baseline): the scenarios run as trunk's tip declares
 * them, in a clean detached worktree at that commit (never the main checkout, whose files may hold edits
 * of their own), and file trunk readings at the tip. The worktree is removed afterwards, whatever the
 * runs came to. Scenarios the tip does not declare are left out (nothing to compare with: `new`).
 */
export async function measureTrunkTip(p: EvalProject, tip: string, scenarios: readonly string[], by: string): Promise<Reading[]> {
  if (scenarios.length === 0) return [];
  const root = mainRoot(p);
  const dir = join(mkdtempSync(join(tmpdir(), 'trellis-trunk-')), 'tip');
  await git(root, ['worktree', 'add', '--detach', '--quiet', dir, tip]);
  try {
    const declared = readSpecTree(dir, p.settings().specRoot).nodes.flatMap((n) => n.scenarios);
    const decls = scenarios.flatMap((id) => declared.filter((d) => d.id === id));
    return await runDefinitions(p, { scope: TRUNK, worktree: dir, commit: tip }, decls, by);
  } finally {
    await gitRaw(root, ['worktree', 'remove', '--force', dir]);
    rmSync(join(dir, '..'), { recursive: true, force: true });
    await gitRaw(root, ['worktree', 'prune']);
  }
}
