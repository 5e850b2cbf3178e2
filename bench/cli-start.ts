/**
 * `npm run bench -- cli` (issue 40): what a verb that opens a project costs over Node's own start-up,
 * and the command hook's CPU per agent event, measured side by side in one run, alternating: `node -e 0`,
 * `trellis issue reply`, one `trellis session signal` (a real claude's hook JSON, UserPromptSubmit and
 * Stop in turn, each writing one event to the session's log), then issue ls, board, session ls and status.
 * Wall times are medians; CPU (user + system, the verb's process and the children it waited for) comes
 * from /proc at 10 ms ticks, summed over the rounds and divided. Each verb's figures are also said as a
 * ratio to `node -e 0`'s (wall and CPU): on a loaded machine node's own start-up moves, and the ratio less.
 * The hook runs its own entry (bin.ts → hook.js: no parser, no issue code); its target is its CPU per event.
 *
 * BENCH_CLI_COMPARE=<another build's dist/src/cli/bin.js> runs the same verbs of that build in the same
 * rounds (the before of a before/after, in one run on one machine); several builds, comma-separated, are
 * reported as compare., compare2., compare3. … in that order; BENCH_CLI_ROUNDS sets the rounds;
 * BENCH_CLI_VERBS=hook,issue-reply (names as reported, without `cli.`) measures those verbs only.
 */
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { claudeAtRest, cpuMs, hookPayload } from './agent-hooks.js';
import { BIN } from './issues.js';
import { report, round, stats } from './lib.js';

const ROUNDS = Number(process.env.BENCH_CLI_ROUNDS ?? 20);

interface Samples {
  wall: number[];
  cpu: number;
}

export async function cliStartBench(): Promise<void> {
  const claude = await claudeAtRest();
  try {
    const { dir, env, id, agentSession } = claude;
    const builds: [string, string][] = [['', BIN]];
    const compares = (process.env.BENCH_CLI_COMPARE ?? '').split(',').filter((b) => b !== '');
    compares.forEach((bin, i) => builds.push([`compare${i === 0 ? '' : i + 1}.`, bin]));
    const thread = (JSON.parse(claude.cli(['issue', 'open', 'bench thread', '--by', 'bench', '--json']).stdout) as { id: string }).id;
    const verbs: [string, (round: number) => { args: string[]; input?: string }][] = [
      ['issue-reply', () => ({ args: ['issue', 'reply', thread, '--body', 'cli', '--by', 'bench'] })],
      ['hook', (i) => {
        const event = i % 2 === 0 ? 'UserPromptSubmit' : 'Stop';
        return { args: ['session', 'signal', id, event], input: hookPayload(event, agentSession) };
      }],
      ['issue-ls', () => ({ args: ['issue', 'ls'] })],
      ['board', () => ({ args: ['board'] })],
      ['session-ls', () => ({ args: ['session', 'ls'] })],
      ['status', () => ({ args: ['status'] })],
    ];
    const only = process.env.BENCH_CLI_VERBS?.split(',');
    if (only) verbs.splice(0, verbs.length, ...verbs.filter(([name]) => only.includes(name)));
    const samples = new Map<string, Samples>();
    const run = (key: string, args: string[], input?: string, ok: (status: number | null) => boolean = (s) => s === 0) => {
      const cpu0 = cpuMs('self', true);
      const t0 = performance.now();
      const r = spawnSync(process.execPath, args, { cwd: dir, env, input, encoding: 'utf8' });
      const wall = performance.now() - t0;
      if (!ok(r.status)) throw new Error(`${key}: ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
      const s = samples.get(key) ?? { wall: [], cpu: 0 };
      s.wall.push(wall);
      s.cpu += cpuMs('self', true) - cpu0;
      samples.set(key, s);
    };
    // One warm round (the page cache, git's packs), not counted.
    for (let i = -1; i < ROUNDS; i++) {
      run('node', ['-e', '0']);
      // The builds take turns going first: the one that runs first in a round was measured to pay more (the
      // hook: about 8 ms more CPU, whichever build it was), which a fixed order would put on one build.
      const turn = ((i % builds.length) + builds.length) % builds.length;
      for (const [prefix, bin] of [...builds.slice(turn), ...builds.slice(0, turn)]) {
        // `status` exits 1 with no serve online: what it costs to say so is what is measured.
        for (const [name, make] of verbs) {
          const { args, input } = make(i);
          run(`${prefix}${name}`, [bin, ...args], input, name === 'status' ? (s) => s === 0 || s === 1 : undefined);
        }
      }
      if (i === -1) samples.clear();
    }
    const node = samples.get('node')!;
    const nodeMedian = stats(node.wall).median_ms;
    const nodeCpu = node.cpu / ROUNDS;
    const load = round(loadavg()[0]!);
    for (const [prefix] of builds) {
      for (const [name] of verbs) {
        const s = samples.get(`${prefix}${name}`)!;
        const median = stats(s.wall).median_ms;
        const cpu = s.cpu / ROUNDS;
        const compared = prefix === '' && builds.length > 1 ? samples.get(`compare.${name}`) : undefined;
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
          ...(name === 'hook' ? { target_cpu_ms: 60 } : { target_over_node_ms: 45 }),
          load_avg_1m: load,
        });
      }
    }
  } finally {
    await claude.close();
  }
}
