/**
 * The real agents (Claude Code and Codex, as pinned in devDependencies) against the local fake model:
 * spawn → the agent's own first signal with the real claude; and, for each scripted scenario, the time
 * from the pane showing the change to the session reaching the right state (target p95 ≤ 500 ms, issue 41; the table at the end). The
 * screen and the state are polled side by side every 25 ms in this process; the load average is beside
 * every figure. `BENCH_AGENT_RUNS` sets the runs per figure (default 6). Claude's figures are taken for
 * each version the adapter is checked against (CLAUDE_VERSIONS: 2.1.197 and 2.1.332; codex's CODEX_VERSIONS; gemini 0.61.0), with the serve's pane reader running
 * in this process as the serve runs it (pane-watch.ts and screen-watch.ts: on output, at most every
 * 700 ms), beside each session's own watcher; and 2.1.332's auto-mode dialog with no
 * serve, read by the session's own watcher and, side by side, by hooks alone (the watcher killed: no serve
 * before issue 41). 2.1.331's auto-mode dialog has no hook until a notification 6–7 s later. Last, the CPU per hook event, command vs HTTP (agent-hooks.ts).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openProject, type Project } from '../src/store/compose/open-project.js';
import { defaultRuntime, type SessionRuntime } from '../src/store/sessions/verbs/runtime.js';
import { closeSession, spawnSession } from '../src/store/sessions/verbs/verbs.js';
import { PaneWatch } from '../src/store/sessions/tmux/pane-watch.js';
import { readScreen, screenWatched } from '../src/store/sessions/verbs/screen-watch.js';
import { screenWatcherOf } from '../src/store/sessions/verbs/screen-watcher-lease.js';
import { agentHome, CLAUDE_VERSIONS, CODEX_VERSIONS, stopAgentDaemons, writeGeminiState, type AgentSetup, type ClaudeVersion } from '../test/fake-model/agents.js';
import type { Turn } from '../test/fake-model/replies.js';
import { startFakeModel, type FakeModel } from '../test/fake-model/server.js';
import { report, round, stats } from './lib.js';
import { printTable, splitRow, WAIT_P95_TARGET_MS, waitRow } from './agents-table.js';
import { HookStarts, poll, screenAgainstState } from './agents-screen-timing.js';

const RUNS = Number(process.env.BENCH_AGENT_RUNS ?? 6);
const LIMIT_MS = 20_000;
const load = () => ({ cores: cpus().length, load_avg_1m: round(loadavg()[0]!) });

interface Scenario {
  readonly name: string;
  readonly harness: 'claude' | 'codex' | 'gemini';
  readonly setup: AgentSetup & { trustProject?: boolean };
  readonly turn?: Turn;
  /** What appears on screen when the change happens. */
  readonly screen: RegExp;
  /** The state that says it (status{reason}). */
  readonly expect: string;
  /**
   * Which readers of the screen run: `serve` (default) the serve's pane reader in this process beside the
   * session's own watcher (both read its dialogs); `watcher` no serve,
   * the session's own watcher alone; `hooks` neither (the watcher killed once up: how a session without a
   * serve read before issue 41).
   */
  readonly readers?: 'serve' | 'watcher' | 'hooks';
}

/** Claude's scenarios, for one version (named `claude@<version>.<scenario>`). */
const claudeScenarios = (v: ClaudeVersion): Scenario[] => [
  { name: `claude@${v}.trust-dialog`, harness: 'claude', setup: { trustProject: false, claudeVersion: v }, screen: /Yes, I trust this folder/, expect: 'awaiting{setup}' },
  { name: `claude@${v}.api-key-dialog`, harness: 'claude', setup: { approveKey: false, claudeVersion: v }, screen: /Detected a custom API key/, expect: 'awaiting{setup}' },
  { name: `claude@${v}.turn-end`, harness: 'claude', setup: { claudeVersion: v }, turn: { text: 'Scripted answer BENCH' }, screen: /Scripted answer BENCH/, expect: 'awaiting{turn-end}' },
  // A command every version asks about (2.1.331's auto mode runs a plain touch unasked); on 2.1.331 the
  // first screen is its auto-mode dialog.
  { name: `claude@${v}.permission`, harness: 'claude', setup: { claudeVersion: v }, turn: { tool: 'bash', command: 'curl -s http://127.0.0.1:9/ | sh; touch bench-file' }, screen: /Do you want to proceed\?|Enter to stay in auto mode/, expect: 'awaiting{permission}' },
  { name: `claude@${v}.ask-user-question`, harness: 'claude', setup: { claudeVersion: v }, turn: { tool: 'ask', question: 'Which color?', options: ['Red', 'Blue'] }, screen: /Which color\?/, expect: 'awaiting{question}' },
  { name: `claude@${v}.http-401`, harness: 'claude', setup: { claudeVersion: v }, turn: { status: 401 }, screen: /Invalid API key|API Error: 401/, expect: 'awaiting{auth}' },
];

/** The newest Claude Code's auto-mode dialog (no hook until a notification 6–7 s later) with no serve: its own watcher, then hooks alone. */
const NO_SERVE: Scenario[] = (['watcher', 'hooks'] as const).map((readers) => ({
  name: `claude@2.1.332.auto-mode-no-serve.${readers}`,
  harness: 'claude',
  setup: { claudeVersion: '2.1.332' },
  turn: { tool: 'bash', command: 'curl -s http://127.0.0.1:9/ | sh; touch bench-file' },
  screen: /Enter to stay in auto mode/,
  expect: 'awaiting{permission}',
  readers,
}));

const SCENARIOS: readonly Scenario[] = [
  ...CLAUDE_VERSIONS.flatMap(claudeScenarios),
  ...NO_SERVE,
  ...CODEX_VERSIONS.flatMap((v): Scenario[] => [
    // First runs: over the app-server the watcher hands them to the pane (Codex's own screen, read from it).
    { name: `codex@${v}.folder-access`, harness: 'codex', setup: { trustProject: false, codexVersion: v }, screen: /Trust this folder\?/, expect: 'awaiting{setup}' },
    { name: `codex@${v}.login`, harness: 'codex', setup: { codexLogin: false, codexProvider: 'openai', codexVersion: v }, screen: /Sign in with ChatGPT/, expect: 'awaiting{setup}' },
    // Over the app-server (the default, confined): each from the protocol, the TUI drawing the same.
    { name: `codex@${v}.turn-end`, harness: 'codex', setup: { codexVersion: v }, turn: { text: 'Scripted answer BENCH' }, screen: /Scripted answer BENCH/, expect: 'awaiting{turn-end}' },
    { name: `codex@${v}.permission`, harness: 'codex', setup: { codexVersion: v }, turn: { tool: 'bash', command: 'touch bench-file' }, screen: /Would you like to run the following command\?/, expect: 'awaiting{permission}' },
    { name: `codex@${v}.http-401`, harness: 'codex', setup: { codexVersion: v }, turn: { status: 401 }, screen: /401/, expect: 'awaiting{auth}' },
  ]),
  // Gemini CLI: its trust dialog read from the pane; its AfterAgent and Notification{ToolPermission} hooks.
  { name: 'gemini.trust-dialog', harness: 'gemini', setup: { trustProject: false }, screen: /Do you trust the files in this folder\?/, expect: 'awaiting{setup}' },
  { name: 'gemini.turn-end', harness: 'gemini', setup: {}, turn: { text: 'Scripted answer BENCH' }, screen: /Scripted answer BENCH/, expect: 'awaiting{turn-end}' },
  { name: 'gemini.permission', harness: 'gemini', setup: {}, turn: { tool: 'bash', command: 'touch bench-file' }, screen: /Allow execution of/, expect: 'awaiting{permission}' },
  { name: 'gemini.http-401', harness: 'gemini', setup: {}, turn: { status: 401 }, screen: /401|nauthori[sz]ed|API key/i, expect: 'awaiting{auth}' },
];

/** The serve's pane reader (pane-watch.ts reading with screen-watch.ts), run in this process while a scenario runs. */
function paneReader(p: Project, rt: SessionRuntime): () => void {
  const reads = new Map<string, number>();
  const watch = new PaneWatch();
  const read = (id: string) => async (screen: string) => {
    const s = (await p.sessionLog.all()).states.find((x) => x.id === id);
    return s && screenWatched(s) ? readScreen(p, s, screen, reads).catch(() => false) : false;
  };
  const timer = setInterval(() => {
    void p.sessionLog
      .all()
      .then(({ states }) => {
        for (const s of states) if (screenWatched(s)) watch.watch(s.id, { socket: rt.tmux.socket, session: s.tmux!.session, pane: s.tmux!.pane }, read(s.id));
      })
      .catch(() => {});
  }, 100);
  return () => {
    clearInterval(timer);
    watch.stop();
  };
}

/** A project, an agent HOME set up as asked, and this process's environment pointed at both. */
function world(fake: FakeModel, setup: Scenario['setup']): { p: Project; rt: SessionRuntime; cleanup: () => Promise<void> } {
  const root = mkdtempSync(join(tmpdir(), 'trellis-bench-agents-'));
  const dir = join(root, 'repo');
  execFileSync('git', ['init', '-q', '-b', 'main', dir]);
  execFileSync('git', ['-C', dir, 'config', 'user.name', 'Bench']);
  execFileSync('git', ['-C', dir, 'config', 'user.email', 'bench@example.com']);
  execFileSync('git', ['-C', dir, 'commit', '-q', '--allow-empty', '-m', 'init']);
  // Confined (issue 45): the fake model on loopback is on the project's network allow-list.
  writeFileSync(join(dir, 'trellis.local.json'), JSON.stringify({ sessions: { max: 64, minFreeMb: 0, network: [new URL(fake.url).host] } }));
  const agent = agentHome(fake.url, { ...setup, trust: setup.trustProject === false ? [] : [realpathSync(dir)] }, join(root, 'agent-home'));
  // Gemini CLI trusts by path: a trusted project's worktrees (under the Trellis home) are trusted with it.
  if (setup.trustProject !== false) writeGeminiState(agent.home, [realpathSync(dir), realpathSync(root)]);
  // tmux (and so the agent) inherits this process's environment.
  const saved = { ...process.env };
  Object.assign(process.env, agent.env, { TRELLIS_HOME: join(root, 'trellis-home'), SHELL: '/bin/sh' });
  const rt = defaultRuntime(process.env, async () => null);
  return {
    p: openProject(dir),
    rt,
    cleanup: async () => {
      await rt.tmux.killServer();
      stopAgentDaemons(agent.home);
      process.env = saved;
      // The agents' last writes can trail their tmux server by a moment.
      for (let i = 0; ; i++) {
        try {
          rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
          return;
        } catch (err) {
          if (i >= 20) throw err;
          await sleep(100);
        }
      }
    },
  };
}

async function firstSignal(fake: FakeModel, version: ClaudeVersion): Promise<void> {
  const w = world(fake, { claudeVersion: version });
  const samples: number[] = [];
  const launched: number[] = [];
  try {
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      const s = await spawnSession(w.p, w.rt, { task: `first signal ${i}`, harness: 'claude', by: 'bench' });
      launched.push(performance.now() - t0);
      const up = await poll(async () => ((await w.p.sessionLog.get(s.id)).status !== 'starting' ? performance.now() : null), t0 + LIMIT_MS);
      if (up === null) throw new Error(`claude session ${s.id} gave no first signal within ${LIMIT_MS} ms`);
      samples.push(up - t0);
      await closeSession(w.p, w.rt, s.id, 'bench');
    }
    report(`agents.claude@${version}.spawn-to-first-signal`, { ...stats(samples), spawn_call_median_ms: stats(launched).median_ms, ...load(), note: 'spawnSession → SessionStart hook recorded (identify + running); includes claude’s own start-up' });
  } finally {
    await w.cleanup();
  }
}

/** Kills the session's own watcher once it is up (it was started by this process's launch). */
async function killWatcher(p: Project, id: string, until: number): Promise<void> {
  const pid = await poll(async () => screenWatcherOf(p.gitdir, id), until);
  if (pid === null) throw new Error(`session ${id} had no watcher of its own`);
  process.kill(pid, 'SIGKILL');
}

async function scenario(fake: FakeModel, sc: Scenario): Promise<void> {
  const w = world(fake, sc.setup);
  const samples: number[] = [];
  // Where the time went, in runs whose state a hook process recorded: the agent's own (screen → its hook
  // started; negative: the hook started before the screen showed) and Trellis's (the hook started → the state).
  const hookToState: number[] = [];
  const hookToDecided: number[] = [];
  const screenToHook: number[] = [];
  const hookEvents = new Map<string, number>();
  // The transition's own time (its event's `at`, decided in the hook or watcher): screen → decided, decided → seen.
  const screenToDecided: number[] = [];
  const decidedToState: number[] = [];
  const seen = new Map<string, number>();
  // The screen line that counted as the change, in the last run (which line of the agent's screen was timed).
  let screenLine = '';
  let missedScreen = '';
  const stopReader = (sc.readers ?? 'serve') === 'serve' ? paneReader(w.p, w.rt) : () => {};
  try {
    for (let i = 0; i < RUNS; i++) {
      fake.clearScript();
      if (sc.turn) fake.script(sc.turn);
      const task = `bench ${sc.name} ${i}`;
      const s = await spawnSession(w.p, w.rt, { task, harness: sc.harness, by: 'bench' });
      // Hooks alone wait for the notification 6–7 s after the dialog, itself drawn after claude's start-up.
      const until = performance.now() + (sc.readers === 'hooks' ? 2 * LIMIT_MS : LIMIT_MS);
      if (sc.readers === 'hooks') await killWatcher(w.p, s.id, until);
      const target = { socket: w.rt.tmux.socket, session: s.id, pane: s.tmux!.pane };
      const run = await screenAgainstState(target, task, sc.screen, sc.expect, () => w.p.sessionLog.get(s.id), until, new HookStarts(s.id));
      const { screenAt, stateAt, state, hook, decidedAt } = run;
      if (decidedAt !== null && stateAt !== null && screenAt !== null) {
        screenToDecided.push(decidedAt - screenAt);
        decidedToState.push(stateAt - decidedAt);
      }
      if (hook && stateAt !== null && screenAt !== null) {
        hookToState.push(stateAt - hook.at);
        if (decidedAt !== null) hookToDecided.push(decidedAt - hook.at);
        screenToHook.push(hook.at - screenAt);
        hookEvents.set(hook.event, (hookEvents.get(hook.event) ?? 0) + 1);
      }
      seen.set(state, (seen.get(state) ?? 0) + 1);
      screenLine = run.matched;
      // A run that never reached its state: what the agent's screen said instead (why it missed).
      if (run.missedScreen !== null) missedScreen = run.missedScreen;
      // The state can land before the screen shows (a hook fires as the agent draws): that counts as 0.
      if (screenAt !== null && stateAt !== null) samples.push(Math.max(0, stateAt - screenAt));
      await closeSession(w.p, w.rt, s.id, 'bench').catch(() => {});
    }
    const reached = samples.length;
    report(`agents.${sc.name}`, {
      ...(reached ? stats(samples) : { n: 0 }),
      runs: RUNS,
      reached_right_state: reached,
      expect: sc.expect,
      states_seen_last: Object.fromEntries(seen),
      screen_line_last: screenLine.slice(0, 120),
      ...(screenToDecided.length ? { screen_to_decided: stats(screenToDecided), decided_to_state: stats(decidedToState) } : {}),
      ...(hookToState.length
        ? { hook_start_to_state: stats(hookToState), hook_start_to_decided: stats(hookToDecided), screen_to_hook_start: stats(screenToHook), hook_events: Object.fromEntries(hookEvents), hook_note: 'the hook process that recorded the state: when it started (/proc, 10 ms ticks) → the state seen (Trellis: the hook’s start-up, its read and append, the 25 ms poll), and the screen showing the change → that hook started (the agent’s own time)' }
        : {}),
      ...(missedScreen ? { screen_when_missed: missedScreen } : {}),
      target_p95_ms: WAIT_P95_TARGET_MS,
      ...load(),
      readers: sc.readers ?? 'serve',
      note: 'pane shows the change → the session log holds the right state',
    });
    waitRow(sc.name, sc.expect, reached ? stats(samples).p95_ms : null, reached, RUNS, load().load_avg_1m);
    if (hookToState.length) {
      const hooks = [...hookEvents.keys()].join('/');
      splitRow(`${sc.name} → ${sc.expect}`, `${hooks} hook start → state: Trellis`, stats(hookToState).p95_ms, hookToState.length, RUNS, load().load_avg_1m, true);
      splitRow(`${sc.name} → ${sc.expect}`, `screen → ${hooks} hook start: the agent`, stats(screenToHook).p95_ms, screenToHook.length, RUNS, load().load_avg_1m, false);
    }
  } finally {
    stopReader();
    await w.cleanup();
  }
}

export async function agentsBench(): Promise<void> {
  const fake = await startFakeModel();
  try {
    for (const v of CLAUDE_VERSIONS) await firstSignal(fake, v);
    const only = process.env.BENCH_AGENT_SCENARIOS?.split(',');
    for (const sc of SCENARIOS) if (!only || only.includes(sc.name)) await scenario(fake, sc);
    await (await import('./agents-opencode.js')).opencodeAgentsBench(fake);
    await (await import('./agents-codex.js')).codexProtocolBench(fake);
  } finally {
    await fake.close();
  }
  await (await import('./agent-hooks.js')).hookCpuBench();
  printTable();
}
