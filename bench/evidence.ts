/**
 * Evidence of done (DESIGN.md §14): the review bundle with a session's checks at 50 scenarios (the runs
 * excluded: the readings are filed beforehand), `trellis session check` of 10 scenarios whose trunk
 * reading is stale (so it measures trunk's tip too, in a detached worktree), and the overlap update after
 * one commit with 50 live sessions — beside a cold recompute of all 50, as a ratio.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { scenarioKey } from '../src/events/index.js';
import { openProject, type Project } from '../src/store/compose/open-project.js';
import { checkSession } from '../src/store/sessions/checks/check-session.js';
import { checksAtDispatch, checksOf } from '../src/store/sessions/checks/checks.js';
import { OverlapTracker } from '../src/store/sessions/checks/overlap.js';
import { reviewBundle } from '../src/store/sessions/checks/review.js';
import { repeat, report, round, stats, tempRepo } from './lib.js';

const NODES = 5;
const PER_NODE = 10;
const SESSIONS = 50;

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
const load = () => loadavg().map((x) => Math.round(x * 100) / 100);

/** A session as its log records it (queued: no agent needed), with a worktree on its branch. */
async function session(p: Project, dir: string, id: string, nodes: string[]): Promise<string> {
  const base = git(dir, 'rev-parse', 'HEAD');
  const worktree = join(`${dir}-worktrees`, id);
  git(dir, 'worktree', 'add', '-q', '-b', `trellis/${id}`, worktree, base);
  await p.sessionLog.write(id, { type: 'spawn', harness: 'shell', task: id, nodes, issue: null, base, branch: `trellis/${id}`, worktree, by: 'bench', at: new Date().toISOString(), source: 'user' });
  await p.sessionLog.write(id, { type: 'fix-checks', ...(await checksAtDispatch(p, base, null)), by: 'bench', at: new Date().toISOString(), source: 'user' });
  return worktree;
}

export async function evidenceBench(): Promise<void> {
  const { dir, cleanup } = tempRepo();
  try {
    const nodes: string[] = [];
    for (let n = 0; n < NODES; n++) {
      const lines = Array.from({ length: PER_NODE }, (_, k) => `  - { id: shop/n${n}/s${k}, run: "true" }`);
      mkdirSync(join(dir, 'specs/shop'), { recursive: true });
      writeFileSync(join(dir, `specs/shop/n${n}.md`), `---\nscenarios:\n${lines.join('\n')}\n---\n# Node ${n}\n`);
      nodes.push(`shop/n${n}`);
    }
    writeFileSync(join(dir, 'trellis.json'), '{}\n');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-qm', 'scenarios');
    const p = openProject(dir);

    // 1. The review bundle of a session linked to every node: 50 checks, each measured on trunk and at its head.
    const id = 'benchsession1';
    const wt = await session(p, dir, id, nodes);
    writeFileSync(join(wt, 'specs/shop/n0.md'), `${git(wt, 'show', 'HEAD:specs/shop/n0.md')}\nMore.\n`);
    writeFileSync(join(wt, 'code.txt'), 'x\n');
    git(wt, 'add', '-A');
    git(wt, 'commit', '-qm', 'change');
    const head = git(wt, 'rev-parse', 'HEAD');
    const tip = git(dir, 'rev-parse', 'HEAD');
    // The gate counts only runs of the definition it judges (fixed at dispatch; trunk's own at its tip):
    // readings filed as such runs, with a mix of outcomes, the runs themselves excluded.
    let serial = 0;
    const filed = (scenario: string, scope: string, commit: string, outcome: 'pass' | 'fail') =>
      p.evals.write(scenarioKey(scenario), { type: 'measure', by: 'bench', at: new Date().toISOString(), reading: { id: `bench${++serial}`, scenario, scope, commit, outcome, durationMs: 1, output: null, run: 'true' } });
    for (let n = 0; n < NODES; n++) {
      for (let k = 0; k < PER_NODE; k++) {
        const s = `shop/n${n}/s${k}`;
        await filed(s, 'trunk', tip, k % 3 ? 'pass' : 'fail');
        await filed(s, id, head, k % 4 ? 'pass' : 'fail');
      }
    }
    const state = await p.sessionLog.get(id);
    const bundle = await reviewBundle(p, id);
    if (bundle.checks.checks.length !== NODES * PER_NODE || bundle.checks.checks.some((c) => c.verdict === 'unmeasured')) throw new Error('bench setup: expected 50 measured checks');
    const full = await repeat(20, () => reviewBundle(p, id));
    // What the checks add to the bundle: the same inputs, without the git runs the bundle makes anyway.
    const changed = bundle.files.map((f) => f.path);
    const checksOnly = await repeat(20, () => checksOf(p, state, bundle.head, changed));
    const b = stats(full);
    report('evidence.review-bundle-with-checks', { ...b, scenarios: NODES * PER_NODE, checks_added_median_ms: stats(checksOnly).median_ms, checks_share: round(stats(checksOnly).median_ms / b.median_ms), target_ms: 100, loadavg: load() });

    // 2. `session check` of a session linked to one node of 10 scenarios, after trunk moved (untimed) so
    //    its readings are stale: the session's 10 runs and trunk's 10 at its tip in a detached worktree.
    const checker = 'benchchecker1';
    await session(p, dir, checker, ['shop/n4']);
    const checks: number[] = [];
    let remeasured = 0;
    for (let i = 0; i < 10; i++) {
      writeFileSync(join(dir, 'trunk.txt'), `${i}\n`);
      git(dir, 'add', 'trunk.txt');
      git(dir, 'commit', '-qm', `trunk moves ${i}`);
      const t = performance.now();
      const r = await checkSession(p, checker, 'bench');
      checks.push(performance.now() - t);
      remeasured = r.trunk.length;
      if (r.readings.length !== PER_NODE || !r.checks.ready) throw new Error(`bench setup: session check ran ${r.readings.length} and says ${r.checks.line}`);
    }
    report('evidence.session-check', { ...stats(checks), scenarios: PER_NODE, trunk_remeasured_per_check: remeasured, loadavg: load() });

    // 3. 50 live sessions, half of them editing one shared node; then one commit in one worktree.
    const ids: string[] = [];
    const trees: string[] = [];
    for (let i = 0; i < SESSIONS; i++) {
      const sid = `ovl${String(i).padStart(9, '0')}`;
      const tree = await session(p, dir, sid, []);
      writeFileSync(join(tree, `own-${i}.txt`), 'mine\n');
      if (i % 2 === 0) writeFileSync(join(tree, 'specs/shop/n1.md'), `# Node 1, edited by ${i}\n`);
      git(tree, 'add', '-A');
      git(tree, 'commit', '-qm', `work ${i}`);
      ids.push(sid);
      trees.push(tree);
    }
    const tracker = new OverlapTracker(p);
    const states = async () => (await p.sessionLog.all()).states;
    const t0 = performance.now();
    await tracker.refresh(await states());
    const cold = performance.now() - t0;
    const pairs = tracker.overlapsOf(ids[0]!).length;
    const all = await states();
    let recomputedEach = 0;
    // Nothing moved: a read pays only the stamps.
    const updates = await repeat(15, () => tracker.refresh(all));
    // One commit in one worktree (untimed), then the refresh a read after it pays.
    const samples: number[] = [];
    for (let i = 0; i < 15; i++) {
      const tree = trees[(i * 7) % SESSIONS]!;
      writeFileSync(join(tree, `more-${i}.txt`), 'x\n');
      git(tree, 'add', '-A');
      git(tree, 'commit', '-qm', `more ${i}`);
      const before = tracker.stats.recomputed;
      const t = performance.now();
      await tracker.refresh(all);
      samples.push(performance.now() - t);
      recomputedEach = Math.max(recomputedEach, tracker.stats.recomputed - before);
    }
    const u = stats(samples);
    report('evidence.overlap-update-after-commit', {
      ...u,
      live_sessions: SESSIONS,
      recomputed_per_update: recomputedEach,
      no_change_refresh_median_ms: stats(updates).median_ms,
      cold_all_sessions_ms: round(cold),
      cold_over_update: round(cold / u.median_ms),
      pairs_of_first: pairs,
      target_ms: 50,
      loadavg: load(),
    });
  } finally {
    cleanup();
    rmSync(`${dir}-worktrees`, { recursive: true, force: true });
  }
}
