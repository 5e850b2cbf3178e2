/**
 * Codex over its app-server (issue 41), in `npm run bench -- agents`: the Trellis CPU one protocol event
 * costs (target ≤ 5 ms), the real Codex (each of CODEX_VERSIONS) on the local fake model. The cost is the
 * session's watcher process (`trellis session watch-codex`: reading the WebSocket, recording transitions,
 * reading usage), from /proc, over turns a person's prompt starts in the TUI, its idle CPU (the once-a-second
 * check) taken out; and the watcher's own count of its CPU while handling the turn's messages
 * (process.cpuUsage, µs, not /proc's 10 ms ticks less an idle rate that is as large as a turn's figure).
 * Per recorded signal (a turn's started, its usage, its completed: the usage update is recorded by the
 * next signal's append when one follows within 750 ms) and per log append. Beside it, the same turn's end
 * the notify way: one `trellis session signal … notify` process (its whole CPU), as codex's notify program
 * runs it. Both per event and their ratio.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openProject } from '../src/store/compose/open-project.js';
import { protocolDir, protocolFiles } from '../src/store/sessions/agents/codex/codex-app-server.js';
import { defaultRuntime } from '../src/store/sessions/verbs/runtime.js';
import { closeSession, promptSession, spawnSession } from '../src/store/sessions/verbs/verbs.js';
import { agentHome, CODEX_VERSIONS, stopAgentDaemons, type CodexVersion } from '../test/fake-model/agents.js';
import type { FakeModel } from '../test/fake-model/server.js';
import { cpuMs } from './agent-hooks.js';
import { BIN } from './issues.js';
import { report, round, stats } from './lib.js';
import { cpuRow, PROTOCOL_EVENT_CPU_TARGET_MS } from './agents-table.js';

const TURNS = Number(process.env.BENCH_CODEX_TURNS ?? 16);
/** What the watcher writes at each turn's end (codex-watch.ts): its counts, and its own CPU while handling messages (µs). */
interface Stats {
  messages: number;
  forwarded: number;
  carried?: number;
  turns: number;
  handleCpuUs?: number;
}
const LIMIT_MS = 60_000;
/** The watcher's CPU with that of the processes it ran and waited for (git, tmux). */
const watcherCpu = (pid: number) => cpuMs(pid) + cpuMs(pid, true);
const load = () => ({ cores: cpus().length, load_avg_1m: round(loadavg()[0]!) });

async function until<T>(what: string, check: () => Promise<T | null> | T | null): Promise<T> {
  const deadline = performance.now() + LIMIT_MS;
  for (;;) {
    const v = await Promise.resolve(check()).catch(() => null);
    if (v !== null && v !== undefined) return v;
    if (performance.now() > deadline) throw new Error(`codex bench: no ${what} within ${LIMIT_MS} ms`);
    await sleep(25);
  }
}

async function version(fake: FakeModel, codexVersion: CodexVersion, hold: 'held' | 'each'): Promise<void> {
  // Side by side in one run: each usage update its own append (the build before the hold), and held for the next signal's.
  const name = `codex@${codexVersion}${hold === 'each' ? '.usage-each' : ''}`;
  const root = mkdtempSync(join(tmpdir(), 'trellis-bench-codex-'));
  const dir = join(root, 'repo');
  const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@e', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@e' };
  execFileSync('git', ['init', '-q', '-b', 'main', dir]);
  execFileSync('git', ['-C', dir, 'commit', '-q', '--allow-empty', '-m', 'init'], { env: gitEnv });
  writeFileSync(join(dir, 'trellis.local.json'), JSON.stringify({ sessions: { max: 8, minFreeMb: 0, confine: 'off' } }));
  const agent = agentHome(fake.url, { trust: [dir], codexVersion }, join(root, 'agent-home'));
  const saved = { ...process.env };
  // tmux (and so codex and its watcher) inherits this process's environment.
  Object.assign(process.env, agent.env, { ...(hold === 'each' ? { TRELLIS_CODEX_USAGE_HOLD_MS: '0' } : {}), TRELLIS_HOME: join(root, 'trellis-home'), SHELL: '/bin/sh', GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@e', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@e' });
  const rt = defaultRuntime(process.env, async () => null);
  const p = openProject(dir);
  try {
    const s = await spawnSession(p, rt, { task: 'bench warm-up', harness: 'codex', by: 'bench' });
    const files = protocolFiles(protocolDir(s.id));
    const turnEnded = async (turns: number) => {
      const st = JSON.parse(readFileSync(files.stats, 'utf8')) as Stats;
      const state = await p.sessionLog.get(s.id);
      return st.turns >= turns && state.status === 'awaiting' && state.reason === 'turn-end' ? st : null;
    };
    let last = await until('first turn end', () => turnEnded(1));
    const pid = Number(readFileSync(files.watcher, 'utf8'));
    // Its idle CPU: the once-a-second checks, taken out of each turn's figure.
    const idle0 = watcherCpu(pid);
    const idleT0 = performance.now();
    await sleep(5_000);
    const idlePerMs = (watcherCpu(pid) - idle0) / (performance.now() - idleT0);
    let cpu = 0;
    let messages = 0;
    let forwarded = 0;
    let carried = 0;
    const perTurn: number[] = [];
    // The watcher's own count of its CPU while handling the turn's messages (µs, not /proc's 10 ms ticks).
    const handled: number[] = [];
    for (let i = 0; i < TURNS; i++) {
      const c0 = watcherCpu(pid);
      const t0 = performance.now();
      await promptSession(p, rt, s.id, `bench turn ${i}`, 'bench');
      const now = await until(`turn ${i + 2}'s end`, () => turnEnded(last.turns + 1));
      const spent = Math.max(0, watcherCpu(pid) - c0 - idlePerMs * (performance.now() - t0));
      cpu += spent;
      messages += now.messages - last.messages;
      forwarded += now.forwarded - last.forwarded;
      carried += (now.carried ?? 0) - (last.carried ?? 0);
      perTurn.push(spent);
      if (now.handleCpuUs !== undefined) handled.push((now.handleCpuUs - (last.handleCpuUs ?? 0)) / 1000);
      last = now;
    }
    // Per protocol event recorded: each turn's started, usage and completed (a usage update carried by the next signal's append is recorded too), and per append.
    const recorded = forwarded + carried;
    // The same turn end the notify way: one signal process per event (its whole CPU, as codex's notify runs it).
    const notify = JSON.stringify({ type: 'agent-turn-complete', 'thread-id': (await p.sessionLog.get(s.id)).agentSessionId, 'input-messages': ['bench'] });
    const notifyCpu: number[] = [];
    for (let i = 0; i < TURNS; i++) {
      const before = cpuMs('self', true);
      spawnSync(process.execPath, [BIN, 'session', 'signal', s.id, 'notify'], { cwd: dir, env: process.env, input: notify, encoding: 'utf8' });
      notifyCpu.push(cpuMs('self', true) - before);
    }
    const perSignal = cpu / Math.max(1, recorded);
    const notifyMedian = stats(notifyCpu).median_ms;
    report(`agents.${name}.protocol-event-cpu`, {
      turns: TURNS,
      protocol_messages: messages,
      recorded_signals: recorded,
      log_appends: forwarded,
      usage_updates_carried_by_next_append: carried,
      cpu_ms_per_message: round(cpu / Math.max(1, messages)),
      cpu_ms_per_recorded_signal: round(perSignal),
      cpu_ms_per_append: round(cpu / Math.max(1, forwarded)),
      cpu_ms_per_turn: stats(perTurn),
      // The median turn's, less sensitive to one turn's GC or git housekeeping on a loaded machine.
      median_turn_cpu_ms_per_message: round(stats(perTurn).median_ms / Math.max(1, messages / TURNS)),
      median_turn_cpu_ms_per_recorded_signal: round(stats(perTurn).median_ms / Math.max(1, recorded / TURNS)),
      ...(handled.length
        ? {
            handling_cpu_ms_per_turn: stats(handled),
            handling_cpu_ms_per_recorded_signal: round(handled.reduce((a, b) => a + b, 0) / Math.max(1, recorded)),
            median_turn_handling_cpu_ms_per_recorded_signal: round(stats(handled).median_ms / Math.max(1, recorded / TURNS)),
            median_turn_handling_cpu_ms_per_append: round(stats(handled).median_ms / Math.max(1, forwarded / TURNS)),
          }
        : {}),
      idle_cpu_ms_per_s: round(idlePerMs * 1000),
      notify_signal_process_cpu_ms: stats(notifyCpu),
      ratio_notify_over_protocol_signal: round(notifyMedian / Math.max(0.01, perSignal)),
      target_ms: PROTOCOL_EVENT_CPU_TARGET_MS,
      ...load(),
      note: 'the watcher’s CPU with its waited-for children’s (/proc, 10 ms ticks, summed over the turns, idle taken out) per protocol message it read and per signal it recorded (turn/started, tokenUsage, turn/completed); beside it one `trellis session signal … notify` process per event',
    });
    // Per protocol message codex sent (each read, most ignored), and per state change recorded (each a log append).
    // /proc counts in 10 ms ticks (and the idle rate it takes out in 2 ms/s steps): a turn's 8-20 ms is one or
    // two ticks, so its median turn moved by whole ticks between runs of the same build (5.5-6.2 and 2.8-3.1 ms
    // per recorded signal). Its rows are over all the turns; the watcher's own count (µs) is the figure.
    cpuRow(`${name}.protocol-event-cpu (/proc, all turns, per protocol message)`, round(cpu / Math.max(1, messages)), load().load_avg_1m);
    cpuRow(`${name}.protocol-event-cpu (/proc, all turns, per recorded signal)`, round(perSignal), load().load_avg_1m);
    if (handled.length) {
      cpuRow(`${name}.protocol-event-cpu (watcher's own count, median turn, per recorded signal)`, round(stats(handled).median_ms / Math.max(1, recorded / TURNS)), load().load_avg_1m);
      cpuRow(`${name}.protocol-event-cpu (watcher's own count, median turn, per log append)`, round(stats(handled).median_ms / Math.max(1, forwarded / TURNS)), load().load_avg_1m);
    }
    await closeSession(p, rt, s.id, 'bench').catch(() => {});
  } finally {
    await rt.tmux.killServer();
    stopAgentDaemons(agent.home, root);
    process.env = saved;
    await sleep(200);
    rmSync(root, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
  }
}

/** Codex's protocol figures, for each version checked. */
export async function codexProtocolBench(fake: FakeModel): Promise<void> {
  const only = process.env.BENCH_AGENT_SCENARIOS?.split(',');
  if (only && !only.includes('codex.protocol')) return;
  for (const v of CODEX_VERSIONS) for (const hold of ['each', 'held'] as const) await version(fake, v, hold);
}
