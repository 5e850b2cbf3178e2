/**
 * A confined agent ÷ the same agent unconfined (issue 45), interleaved so a change in the machine's load
 * falls on both alike:
 *  - spawn → the agent's own first signal with the real Claude Code (2.1.197) against the fake model:
 *    spawnSession until a hook moved the session out of `starting`. Confined, that counts the relay's two
 *    node processes (outside, which starts the sandbox at once, then inside it), bubblewrap's set-up, and
 *    the hook's signal going out through the relay's socket, recorded in the outer relay's own process
 *    (no CLI start-up per hook); the fake model is reached through the relay's loopback port.
 *  - `npm test` in a session's worktree (node's test runner over 20 files, each its own process) as the
 *    agent's tool call runs it: in the agent's sandbox (confine-agents.ts's mounts) and directly.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { openProject } from '../src/store/compose/open-project.js';
import { agentHomeMounts } from '../src/store/sessions/confine/confine-agents.js';
import { sandboxArgv } from '../src/store/sessions/confine/confine.js';
import { defaultRuntime } from '../src/store/sessions/verbs/runtime.js';
import { closeSession, sessionState, spawnSession } from '../src/store/sessions/verbs/verbs.js';
import { agentHome, stopAgentDaemons } from '../test/fake-model/agents.js';
import { startFakeModel } from '../test/fake-model/server.js';
import { report, round, stats } from './lib.js';

const RUNS = Number(process.env.BENCH_AGENT_RUNS ?? 6);

export async function agentConfineTiming(): Promise<void> {
  const fake = await startFakeModel();
  const root = mkdtempSync(join(tmpdir(), 'trellis-bench-confine-agent-'));
  const dir = join(root, 'repo');
  execFileSync('git', ['init', '-q', '-b', 'main', dir]);
  execFileSync('git', ['-C', dir, 'config', 'user.name', 'Bench']);
  execFileSync('git', ['-C', dir, 'config', 'user.email', 'bench@example.com']);
  // The project's test suite: 20 files under node's test runner (a process each).
  mkdirSync(join(dir, 'test'));
  for (let i = 0; i < 20; i++) writeFileSync(join(dir, 'test', `t${i}.test.mjs`), `import test from 'node:test';\nimport assert from 'node:assert';\nimport { readdirSync } from 'node:fs';\ntest('t${i}', () => assert.ok(readdirSync('.').length > 0));\n`);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'bench', version: '1.0.0', private: true, scripts: { test: 'node --test test/' } }));
  execFileSync('git', ['-C', dir, 'add', '-A']);
  execFileSync('git', ['-C', dir, 'commit', '-qm', 'suite']);
  const setConfine = (confine: 'bubblewrap' | 'off') => writeFileSync(join(dir, 'trellis.local.json'), JSON.stringify({ sessions: { max: 64, minFreeMb: 0, pool: 0, confine, network: [new URL(fake.url).host] } }));
  const agent = agentHome(fake.url, { trust: [realpathSync(dir)] }, join(root, 'agent-home'));
  const saved = { ...process.env };
  Object.assign(process.env, agent.env, { TRELLIS_HOME: join(root, 'trellis-home'), SHELL: '/bin/sh' });
  const rt = defaultRuntime(process.env, async () => null);
  const p = openProject(dir);
  const spawnOnce = async (i: number): Promise<{ ms: number; worktree: string; id: string }> => {
    const t0 = performance.now();
    const s = await spawnSession(p, rt, { task: `first signal ${i}`, harness: 'claude', by: 'bench' });
    for (const deadline = t0 + 30_000; (await p.sessionLog.get(s.id)).status === 'starting'; ) {
      if (performance.now() > deadline) throw new Error(`claude session ${s.id} gave no first signal within 30 s`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return { ms: performance.now() - t0, worktree: s.worktree, id: s.id };
  };
  try {
    const confined: number[] = [];
    const unconfined: number[] = [];
    setConfine('off');
    await closeSession(p, rt, (await spawnOnce(-1)).id, 'bench'); // warm caches
    let kept: { worktree: string; id: string } | undefined;
    for (let i = 0; i < RUNS; i++) {
      setConfine('bubblewrap');
      const c = await spawnOnce(i);
      confined.push(c.ms);
      if (i === RUNS - 1) kept = c;
      else await closeSession(p, rt, c.id, 'bench');
      setConfine('off');
      const u = await spawnOnce(i);
      unconfined.push(u.ms);
      await closeSession(p, rt, u.id, 'bench');
    }
    report('sessions.agent-spawn-to-first-signal-confined', {
      agent: 'claude 2.1.197 against the fake model',
      load: loadavg().map((l) => round(l)),
      confined_bubblewrap: stats(confined),
      unconfined: stats(unconfined),
      ratio_confined_to_unconfined: round(stats(confined).median_ms / stats(unconfined).median_ms),
      target_ratio: 1.2,
      running_means: 'spawnSession → a hook of the agent moved the session out of starting (confined: through the relay)',
    });

    // npm test in the kept session's worktree, as its agent's tool call runs it: in the agent's sandbox, and not.
    const worktree = kept!.worktree;
    const st = await sessionState(p, kept!.id);
    const plan = { worktree, mainRoot: dir, trellisHome: process.env.TRELLIS_HOME!, home: process.env.HOME, branch: st.branch };
    const privateHome = join(root, 'private-home');
    mkdirSync(privateHome);
    const argv = sandboxArgv(process.env, { ...plan, homeMounts: agentHomeMounts('claude', process.env, privateHome).mounts });
    const npmTest = (wrapped: boolean): number => {
      const t0 = performance.now();
      const r = wrapped ? spawnSync(argv[0]!, [...argv.slice(1), 'npm', 'test', '--silent'], { cwd: worktree, encoding: 'utf8' }) : spawnSync('npm', ['test', '--silent'], { cwd: worktree, encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`npm test ${wrapped ? 'confined' : 'unconfined'} exited ${r.status}: ${r.stderr}`);
      return performance.now() - t0;
    };
    npmTest(false);
    npmTest(true);
    const inside: number[] = [];
    const outside: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      inside.push(npmTest(true));
      outside.push(npmTest(false));
    }
    report('sessions.agent-npm-test-confined', {
      suite: 'npm test: node --test over 20 files in a session worktree',
      load: loadavg().map((l) => round(l)),
      confined_bubblewrap: stats(inside),
      unconfined: stats(outside),
      ratio_confined_to_unconfined: round(stats(inside).median_ms / stats(outside).median_ms),
      target_ratio: 1.1,
    });
  } finally {
    await rt.tmux.killServer();
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
    stopAgentDaemons(root);
    await fake.close();
    rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }
}
