/**
 * opencode (as pinned in devDependencies) against the local fake model, in `npm run bench -- agents`:
 * spawn → its first signal (the watcher's first event from opencode's own server recorded), and, for a
 * turn end and a permission, the time from the pane showing it to the session saying it (target p95 ≤
 * 500 ms). Polled every 25 ms in this process, the load average beside every figure.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openProject, type Project } from '../src/store/compose/open-project.js';
import { defaultRuntime, type SessionRuntime } from '../src/store/sessions/verbs/runtime.js';
import { closeSession, spawnSession } from '../src/store/sessions/verbs/verbs.js';
import { agentHome, stopAgentDaemons } from '../test/fake-model/agents.js';
import { opencodeBinDir, opencodeHome } from '../test/fake-model/opencode.js';
import type { Turn } from '../test/fake-model/replies.js';
import type { FakeModel } from '../test/fake-model/server.js';
import { report, round, stats } from './lib.js';
import { splitRow, WAIT_P95_TARGET_MS, waitRow } from './agents-table.js';
import { poll, screenAgainstState } from './agents-screen-timing.js';

const RUNS = Number(process.env.BENCH_AGENT_RUNS ?? 6);
/** opencode takes 5-15 s to start on a loaded 2-core machine. */
const LIMIT_MS = 60_000;
const load = () => ({ cores: cpus().length, load_avg_1m: round(loadavg()[0]!) });
const SCENARIOS: readonly { readonly name: string; readonly turn: Turn; readonly screen: RegExp; readonly expect: string }[] = [
  { name: 'opencode.turn-end', turn: { text: 'Scripted answer BENCH' }, screen: /Scripted answer BENCH/, expect: 'awaiting{turn-end}' },
  { name: 'opencode.permission', turn: { tool: 'bash', command: 'touch bench-file' }, screen: /Permission required/, expect: 'awaiting{permission}' },
  { name: 'opencode.http-401', turn: { status: 401 }, screen: /401|nauthori[sz]ed|API key/i, expect: 'awaiting{auth}' },
];

/** A project, an agent HOME with opencode's config for the fake, and this process's environment pointed at both. */
function world(fake: FakeModel): { p: Project; rt: SessionRuntime; cleanup: () => Promise<void> } {
  const root = mkdtempSync(join(tmpdir(), 'trellis-bench-opencode-'));
  const dir = join(root, 'repo');
  execFileSync('git', ['init', '-q', '-b', 'main', dir]);
  execFileSync('git', ['-C', dir, 'config', 'user.name', 'Bench']);
  execFileSync('git', ['-C', dir, 'config', 'user.email', 'bench@example.com']);
  execFileSync('git', ['-C', dir, 'commit', '-q', '--allow-empty', '-m', 'init']);
  writeFileSync(join(dir, 'trellis.local.json'), JSON.stringify({ sessions: { max: 64, minFreeMb: 0 } }));
  const agent = agentHome(fake.url, {}, join(root, 'agent-home'));
  const saved = { ...process.env };
  // tmux (and so opencode and its watcher) inherits this process's environment.
  Object.assign(process.env, agent.env, opencodeHome(fake.url, agent.home), {
    PATH: `${opencodeBinDir()}:${agent.env.PATH}`,
    TRELLIS_HOME: join(root, 'trellis-home'),
    SHELL: '/bin/sh',
  });
  const rt = defaultRuntime(process.env, async () => null);
  return {
    p: openProject(dir),
    rt,
    cleanup: async () => {
      await rt.tmux.killServer();
      // The watchers end once their panes are gone; anything left from these folders goes now.
      stopAgentDaemons(agent.home, root);
      process.env = saved;
      await sleep(200);
      rmSync(root, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
    },
  };
}

async function firstSignal(fake: FakeModel): Promise<void> {
  const w = world(fake);
  const samples: number[] = [];
  try {
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      const s = await spawnSession(w.p, w.rt, { task: `first signal ${i}`, harness: 'opencode', by: 'bench' });
      const up = await poll(async () => ((await w.p.sessionLog.get(s.id)).status !== 'starting' ? performance.now() : null), t0 + LIMIT_MS);
      if (up === null) throw new Error(`opencode session ${s.id} gave no first signal within ${LIMIT_MS} ms`);
      samples.push(up - t0);
      await closeSession(w.p, w.rt, s.id, 'bench');
    }
    report('agents.opencode.spawn-to-first-signal', { ...stats(samples), ...load(), note: 'spawnSession → the first event of opencode’s own server recorded (identify + running); includes opencode’s own start-up' });
  } finally {
    await w.cleanup();
  }
}

async function scenario(fake: FakeModel, sc: (typeof SCENARIOS)[number]): Promise<void> {
  const w = world(fake);
  const samples: number[] = [];
  // Where the time went: the screen showing the change → the watcher deciding the transition (its event's
  // `at`: opencode's own time, and its event stream's), and decided → the state seen (the append, the poll).
  const screenToDecided: number[] = [];
  const decidedToState: number[] = [];
  const seen = new Map<string, number>();
  // The screen line that counted as the change, in the last run (which line of the agent's screen was timed).
  let screenLine = '';
  let missedScreen = '';
  try {
    for (let i = 0; i < RUNS; i++) {
      fake.clearScript();
      fake.script(sc.turn);
      const task = `bench ${sc.name} ${i}`;
      const s = await spawnSession(w.p, w.rt, { task, harness: 'opencode', by: 'bench' });
      const until = performance.now() + LIMIT_MS;
      const target = { socket: w.rt.tmux.socket, session: s.id, pane: s.tmux!.pane };
      const run = await screenAgainstState(target, task, sc.screen, sc.expect, () => w.p.sessionLog.get(s.id), until);
      const { screenAt, stateAt, state, decidedAt } = run;
      if (decidedAt !== null && stateAt !== null && screenAt !== null) {
        screenToDecided.push(decidedAt - screenAt);
        decidedToState.push(stateAt - decidedAt);
      }
      seen.set(state, (seen.get(state) ?? 0) + 1);
      screenLine = run.matched;
      // A run that never reached its state: what the agent's screen said instead (why it missed).
      if (run.missedScreen !== null) missedScreen = run.missedScreen;
      // The state can land before the screen draws it (the server says it first): that counts as 0.
      if (screenAt !== null && stateAt !== null) samples.push(Math.max(0, stateAt - screenAt));
      await closeSession(w.p, w.rt, s.id, 'bench').catch(() => {});
    }
    report(`agents.${sc.name}`, {
      ...(samples.length ? stats(samples) : { n: 0 }),
      runs: RUNS,
      reached_right_state: samples.length,
      expect: sc.expect,
      states_seen_last: Object.fromEntries(seen),
      screen_line_last: screenLine.slice(0, 120),
      ...(missedScreen ? { screen_when_missed: missedScreen } : {}),
      ...(screenToDecided.length ? { screen_to_decided: stats(screenToDecided), decided_to_state: stats(decidedToState) } : {}),
      target_p95_ms: WAIT_P95_TARGET_MS,
      ...load(),
      note: 'pane shows the change → the session log holds the right state',
    });
    waitRow(sc.name, sc.expect, samples.length ? stats(samples).p95_ms : null, samples.length, RUNS, load().load_avg_1m);
    if (screenToDecided.length) {
      splitRow(`${sc.name} → ${sc.expect}`, 'its event decided → state: Trellis', stats(decidedToState).p95_ms, decidedToState.length, RUNS, load().load_avg_1m, true);
      splitRow(`${sc.name} → ${sc.expect}`, 'screen → its event decided: opencode and its event stream', stats(screenToDecided).p95_ms, screenToDecided.length, RUNS, load().load_avg_1m, false);
    }
  } finally {
    await w.cleanup();
  }
}

/** opencode's figures (`BENCH_AGENT_SCENARIOS` picks among `opencode.first-signal` and the scenarios too). */
export async function opencodeAgentsBench(fake: FakeModel): Promise<void> {
  const only = process.env.BENCH_AGENT_SCENARIOS?.split(',');
  if (!only || only.includes('opencode.first-signal')) await firstSignal(fake);
  for (const sc of SCENARIOS) if (!only || only.includes(sc.name)) await scenario(fake, sc);
}
