/**
 * `npm run bench -- cli` (issue 40): what a verb that opens a project costs over Node's own start-up,
 * and the command hook's CPU per agent event, measured side by side in one run, alternating: `node -e 0`,
 * `trellis issue reply`, one hook event (a real claude's hook JSON, UserPromptSubmit and Stop in turn, each
 * writing one event to the session's log), then issue ls, board, session ls and status.
 * Wall times are medians; CPU (user + system, the verb's process and the children it waited for) comes
 * from /proc at 10 ms ticks, summed over the rounds and divided. Each verb's figures are also said as a
 * ratio to `node -e 0`'s (wall and CPU): on a loaded machine node's own start-up moves, and the ratio less.
 *
 * The hook is measured as installed: the exact command line of the session's .claude/settings.local.json
 * (claude unconfined, no serve), run as Claude Code runs a command hook (`sh -c '<command>'` in the worktree,
 * the JSON on stdin). It is the shell program that POSTs the JSON to the session's recorder (its screen
 * watcher, running): `cli.hook` is its CPU per event (target 60), `recorder_cpu_ms` the recorder's own (its
 * /proc delta over the same runs; over another build's runs too, for it hears every transition either way),
 * `total_cpu_ms` both. `cli.hook-fallback` is the same command with no recorder to reach (its socket moved
 * away for the run): the node hook it then runs. `cli.hook-confined` is a confined claude's (a second session,
 * in a project of its own) as installed, run outside with the relay's folder named as inside: its recorder
 * is the outer relay; another build's is its relay stand-in, to the same relay.
 *
 * BENCH_CLI_COMPARE=<another build's dist/src/cli/bin.js> runs the same verbs of that build in the same
 * rounds (the before of a before/after, in one run on one machine; its hook is `sh -c` of the command line
 * that build installed, `<node> <its bin.js> session signal <id> <event>`); several builds, comma-separated,
 * are reported as compare., compare2., compare3. … in that order; BENCH_CLI_ROUNDS sets the rounds;
 * BENCH_CLI_VERBS=hook,issue-reply (names as reported, without `cli.`) measures those verbs only.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { shq } from '../src/store/sessions/agents/adapter.js';
import { loadavg } from 'node:os';
import { claudeAtRest, cpuMs, hookPayload } from './agent-hooks.js';
import { BIN } from './issues.js';
import { report, round, stats } from './lib.js';

const ROUNDS = Number(process.env.BENCH_CLI_ROUNDS ?? 20);

interface Samples {
  wall: number[];
  cpu: number;
}

/** The folder and pid of session `id`'s outer relay (its argv: `<relay> outer <dir> <id> …`), read from /proc. */
function outerRelay(id: string): { dir: string; pid: number } {
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const at = argv.indexOf('outer');
      if (at > 0 && argv[at - 1]!.endsWith('confine-relay.js') && argv[at + 2] === id) return { dir: argv[at + 1]!, pid: Number(pid) };
    } catch {
      // Gone meanwhile.
    }
  }
  throw new Error(`no outer relay of session ${id}`);
}

export async function cliStartBench(): Promise<void> {
  const only = process.env.BENCH_CLI_VERBS?.split(',');
  const claude = await claudeAtRest({ unconfined: true });
  // A confined claude too (the default), for cli.hook-confined: its hooks' recorder is its outer relay.
  let confined: Awaited<ReturnType<typeof claudeAtRest>> | undefined;
  try {
    if (!only || only.includes('hook-confined')) confined = await claudeAtRest();
    const { dir, env, id, agentSession } = claude;
    const shown = JSON.parse(claude.cli(['session', 'show', id, '--json']).stdout) as { worktree: string; screenWatcher: number | null };
    const recorder = shown.screenWatcher;
    if (!recorder) throw new Error(`session ${id} has no screen watcher (its hooks' recorder)`);
    const settings = JSON.parse(readFileSync(join(shown.worktree, '.claude', 'settings.local.json'), 'utf8')) as { hooks: Record<string, { hooks: { command?: string }[] }[]> };
    /** The command line the session's hook for `event` runs, as installed. */
    const installed = (event: string): string => {
      const command = settings.hooks[event]?.[0]?.hooks[0]?.command;
      if (!command?.startsWith('sh ')) throw new Error(`the ${event} hook is not the recorder's shell program: ${command}`);
      return command;
    };
    const socket = join(dir, '.git', 'trellis', 'hooks', id);
    /** The confined session's hook as installed, run outside as inside (the relay's folder named as inside), and its recorder. */
    const inSandbox = (() => {
      if (!confined) return null;
      const view = JSON.parse(confined.cli(['session', 'show', confined.id, '--json']).stdout) as { worktree: string };
      const relay = outerRelay(confined.id);
      const hooks = (JSON.parse(readFileSync(join(view.worktree, '.claude', 'settings.local.json'), 'utf8')) as typeof settings).hooks;
      return { worktree: view.worktree, relay, env: { ...confined.env, TRELLIS_SIGNAL_RELAY: join(relay.dir, 'signal.sock') }, command: (event: string) => hooks[event]![0]!.hooks[0]!.command! };
    })();
    const builds: [string, string][] = [['', BIN]];
    const compares = (process.env.BENCH_CLI_COMPARE ?? '').split(',').filter((b) => b !== '');
    compares.forEach((bin, i) => builds.push([`compare${i === 0 ? '' : i + 1}.`, bin]));
    const thread = (JSON.parse(claude.cli(['issue', 'open', 'bench thread', '--by', 'bench', '--json']).stdout) as { id: string }).id;
    const hookEvent = (i: number) => (i % 2 === 0 ? 'UserPromptSubmit' : 'Stop');
    /** What a verb runs: the build's CLI with `args`, or (`sh`) a shell command line in the session's worktree, as an agent runs its hook. */
    type Call = { args: string[]; input?: string; sh?: string; before?: () => void; after?: () => void; where?: { cwd: string; env: NodeJS.ProcessEnv; recorder: number } };
    const verbs: [string, (round: number, bin: string, current: boolean) => Call | null][] = [
      ['issue-reply', () => ({ args: ['issue', 'reply', thread, '--body', 'cli', '--by', 'bench'] })],
      ['hook', (i, bin, current) => {
        const event = hookEvent(i);
        // This build's hook as installed; another build's as it installed it (the node hook).
        const sh = current ? installed(event) : `${shq(process.execPath)} ${shq(bin)} session signal ${id} ${event}`;
        return { args: [], sh, input: hookPayload(event, agentSession) };
      }],
      ['hook-fallback', (i, _bin, current) => {
        if (!current) return null;
        const event = hookEvent(i);
        return { args: [], sh: installed(event), input: hookPayload(event, agentSession), before: () => renameSync(socket, `${socket}.away`), after: () => renameSync(`${socket}.away`, socket) };
      }],
      ['hook-confined', (i, bin, current) => {
        if (!inSandbox || !confined) return null;
        const event = hookEvent(i);
        const where = { cwd: inSandbox.worktree, env: inSandbox.env, recorder: inSandbox.relay.pid };
        // Another build's confined hook: its relay's stand-in (beside its bin), to the same relay's signal socket.
        const standin = join(dirname(dirname(bin)), 'store/sessions/confine/confine-relay.js');
        const sh = current ? inSandbox.command(event) : `${shq(process.execPath)} ${shq(standin)} session signal ${confined.id} ${event}`;
        return { args: [], sh, input: hookPayload(event, confined.agentSession), where };
      }],
      ['issue-ls', () => ({ args: ['issue', 'ls'] })],
      ['board', () => ({ args: ['board'] })],
      ['session-ls', () => ({ args: ['session', 'ls'] })],
      ['status', () => ({ args: ['status'] })],
    ];
    if (only) verbs.splice(0, verbs.length, ...verbs.filter(([name]) => only.includes(name)));
    const samples = new Map<string, Samples>();
    /** The recorder's CPU over each hook run through it, by key. */
    const recorderCpu = new Map<string, number>();
    const run = (key: string, call: Call & { bin?: string }, ok: (status: number | null) => boolean = (s) => s === 0) => {
      call.before?.();
      const rec = call.where?.recorder ?? recorder;
      const rec0 = cpuMs(rec);
      const cpu0 = cpuMs('self', true);
      const t0 = performance.now();
      const r = call.sh !== undefined
        ? spawnSync('/bin/sh', ['-c', call.sh], { cwd: call.where?.cwd ?? shown.worktree, env: call.where?.env ?? env, input: call.input, encoding: 'utf8' })
        : spawnSync(process.execPath, call.bin ? [call.bin, ...call.args] : call.args, { cwd: dir, env, input: call.input, encoding: 'utf8' });
      const wall = performance.now() - t0;
      const cpu = cpuMs('self', true) - cpu0;
      recorderCpu.set(key, (recorderCpu.get(key) ?? 0) + cpuMs(rec) - rec0);
      call.after?.();
      if (!ok(r.status) || (call.sh !== undefined && r.stderr !== '')) throw new Error(`${key}: ${call.sh ?? call.args.join(' ')} exited ${r.status}: ${r.stderr}`);
      const s = samples.get(key) ?? { wall: [], cpu: 0 };
      s.wall.push(wall);
      s.cpu += cpu;
      samples.set(key, s);
    };
    // One warm round (the page cache, git's packs), not counted.
    for (let i = -1; i < ROUNDS; i++) {
      run('node', { args: ['-e', '0'] });
      // The builds take turns going first: the one that runs first in a round was measured to pay more (the
      // hook: about 8 ms more CPU, whichever build it was), which a fixed order would put on one build.
      const turn = ((i % builds.length) + builds.length) % builds.length;
      for (const [prefix, bin] of [...builds.slice(turn), ...builds.slice(0, turn)]) {
        // `status` exits 1 with no serve online: what it costs to say so is what is measured.
        for (const [name, make] of verbs) {
          const call = make(i, bin, prefix === '');
          if (call) run(`${prefix}${name}`, { ...call, bin }, name === 'status' ? (s) => s === 0 || s === 1 : undefined);
        }
      }
      if (i === -1) {
        samples.clear();
        recorderCpu.clear();
      }
    }
    const node = samples.get('node')!;
    const nodeMedian = stats(node.wall).median_ms;
    const nodeCpu = node.cpu / ROUNDS;
    const load = round(loadavg()[0]!);
    for (const [prefix] of builds) {
      for (const [name] of verbs) {
        const s = samples.get(`${prefix}${name}`);
        if (!s) continue;
        const median = stats(s.wall).median_ms;
        const cpu = s.cpu / ROUNDS;
        // The fallback's before is the other build's hook: the node hook either way.
        const compareKey = `compare.${name === 'hook-fallback' ? 'hook' : name}`;
        const compared = prefix === '' && builds.length > 1 ? samples.get(compareKey) : undefined;
        // The recorder's process (the watcher, or the relay) over the other build's runs too: it hears every transition either way.
        const compareRecorded = compared ? (recorderCpu.get(compareKey) ?? 0) / ROUNDS : undefined;
        const recorded = name.startsWith('hook') && recorderCpu.has(`${prefix}${name}`) ? recorderCpu.get(`${prefix}${name}`)! / ROUNDS : undefined;
        report(`cli.${prefix}${name}`, {
          rounds: ROUNDS,
          median_ms: median,
          node_startup_median_ms: nodeMedian,
          over_node_ms: round(median - nodeMedian),
          wall_ratio_to_node: round(median / nodeMedian),
          cpu_ms: round(cpu),
          node_cpu_ms: round(nodeCpu),
          cpu_over_node_ms: round(cpu - nodeCpu),
          cpu_ratio_to_node: round(cpu / nodeCpu),
          ...(compared ? { compare_over_node_ms: round(stats(compared.wall).median_ms - nodeMedian), compare_cpu_ms: round(compared.cpu / ROUNDS), cpu_ratio_to_compare: round(cpu / (compared.cpu / ROUNDS)) } : {}),
          ...(recorded !== undefined ? { recorder_cpu_ms: round(recorded), total_cpu_ms: round(cpu + recorded) } : {}),
          ...(recorded !== undefined && compared && compareRecorded !== undefined ? { compare_total_cpu_ms: round(compared.cpu / ROUNDS + compareRecorded), total_cpu_ratio_to_compare: round((cpu + recorded) / (compared.cpu / ROUNDS + compareRecorded)) } : {}),
          ...(name.startsWith('hook') ? { target_cpu_ms: 60 } : { target_over_node_ms: 45 }),
          load_avg_1m: load,
        });
      }
    }
  } finally {
    await confined?.close();
    await claude.close();
  }
}
