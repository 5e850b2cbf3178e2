/**
 * What reading the agents' own usage costs per hook event (issue 42; target: at most 2 ms of CPU per
 * event), and that a 50 MB transcript is never re-read from the start. In one process, side by side:
 *
 * - `read`: the reading alone (new bytes, the lines that can carry usage parsed, priced with the table
 *   loaded) for one hook event after the agent wrote one more response, against a small transcript and
 *   against a 50 MB one (the same work: only the new bytes; the ratio is the proof);
 * - `hook`: the target itself: the signal verb of a hook event (`Stop` after a response, `UserPromptSubmit`
 *   before the next) whose agent wrote one more response, beside the same hook events of a session whose
 *   transcript has nothing new (its usage read finds no bytes), alternating in one run: their difference is
 *   what reading usage adds to a hook (the usage event rides in the hook's own append: one compare-and-swap);
 * - `record`: recordUsage alone (read + the `usage` event appended on its own), beside a plain transition's
 *   append (`busy`/`await`);
 * - `catch-up`: the 50 MB transcript read the first time (over several hook events, READ_LIMIT each);
 * - the bytes each event read, which must be the bytes the agent wrote since the last one.
 *
 * The price table's module load (once per process: once per serve, or per `trellis session signal`
 * process of a command hook) is reported on its own.
 */
import { appendFileSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { report, round, stats, tempRepo } from './lib.js';
import { openProject } from '../src/store/compose/open-project.js';
import { recordUsage } from '../src/store/sessions/usage/usage-verb.js';
import { claudeUsage, newLines, READ_LIMIT } from '../src/store/sessions/usage/usage-read.js';
import { priceEntries } from '../src/store/sessions/usage/usage-price.js';
import { appendCommand, sessionState } from '../src/store/sessions/verbs/verbs.js';
import { signalSession } from '../src/store/sessions/verbs/signal-verb.js';
import type { SessionRuntime } from '../src/store/sessions/log/session-runtime.js';
import { setPowerLossSyncs } from '../src/store/git/durable.js';

const EVENTS = Number(process.env.BENCH_COST_EVENTS ?? 60);
const BIG = 50 * 1024 * 1024;
const cpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** One response as Claude Code writes it: a tool result (the user's line) and the assistant's two lines of one id. */
function response(n: number, filler: string): string {
  const usage = { input_tokens: 1000 + n, output_tokens: 200 + n, cache_read_input_tokens: 5000 + n, cache_creation_input_tokens: 300 + n };
  const id = `msg_bench${n}`;
  const assistant = (content: unknown) => JSON.stringify({ type: 'assistant', isSidechain: false, timestamp: new Date().toISOString(), message: { id, model: 'claude-opus-4-8', role: 'assistant', content, usage } });
  return [
    JSON.stringify({ type: 'user', isSidechain: false, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${n}`, content: filler }] } }),
    assistant([{ type: 'text', text: 'I will run it.' }]),
    assistant([{ type: 'tool_use', id: `t${n + 1}`, name: 'Bash', input: { command: 'ls' } }]),
    '',
  ].join('\n');
}

export async function costBench(): Promise<void> {
  const { dir, cleanup } = tempRepo();
  try {
    writeFileSync(join(dir, 'README'), 'x');
    const { execFileSync } = await import('node:child_process');
    execFileSync('git', ['-C', dir, 'add', '.']);
    execFileSync('git', ['-C', dir, 'commit', '-q', '-m', 'init']);
    const p = openProject(dir);
    const projects = join(dir, '.bench-claude', 'projects', '-repo');
    mkdirSync(projects, { recursive: true });
    const filler = 'x'.repeat(2000);

    // Each session: a claude session whose agent writes to its own transcript.
    const session = async (name: string, agentId: string) => {
      const id = `bench${name}`;
      await p.sessionLog.write(id, { type: 'spawn', harness: 'claude', task: 'bench', nodes: [], issue: null, base: 'HEAD', branch: `trellis/${id}`, worktree: dir, by: 'bench', at: new Date().toISOString(), source: 'user' });
      await appendCommand(p, id, { type: 'start' }, 'bench', 'supervisor');
      await appendCommand(p, id, { type: 'identify', agentSessionId: agentId }, id, 'hook');
      const file = join(projects, `${agentId}.jsonl`);
      return { id, file, payload: { hook_event_name: 'Stop', session_id: agentId, transcript_path: file } };
    };

    // The price table's load, once per process.
    const load0 = cpu();
    await priceEntries('claude', [{ key: 'k', model: 'claude-opus-4-8', input: 1, output: 1, cacheRead: 0, cacheWrite: 0, at: null }]);
    report('cost price-table load (once per process)', { cpu_ms: round(cpu() - load0) });

    const small = await session('small', '00000000-0000-4000-8000-000000000001');
    const big = await session('big', '00000000-0000-4000-8000-000000000002');
    writeFileSync(small.file, response(0, filler));
    await recordUsage(p, await sessionState(p, small.id), small.payload);
    // 50 MB of transcript already written (a long session) before Trellis reads it.
    const chunk = Array.from({ length: 200 }, (_, i) => response(i, filler)).join('');
    let size = 0;
    writeFileSync(big.file, '');
    for (let n = 0; size < BIG; n += 200) {
      const text = chunk.replaceAll('msg_bench', `msg_b${n}_`);
      appendFileSync(big.file, text);
      size += Buffer.byteLength(text);
    }

    // Catch-up: the first reads of the 50 MB transcript, READ_LIMIT per hook event.
    const catchUp: number[] = [];
    for (;;) {
      const state = await sessionState(p, big.id);
      if ((state.usageRead[big.file] ?? 0) >= size) break;
      const c0 = cpu();
      await recordUsage(p, state, big.payload);
      catchUp.push(cpu() - c0);
    }
    report('cost catch-up of a 50 MB transcript (first read)', { bytes: size, events: catchUp.length, read_limit: READ_LIMIT, cpu_ms_per_event: stats(catchUp), cpu_ms_total: round(catchUp.reduce((a, b) => a + b, 0)) });

    // Then one response per hook event: the reading alone and the whole record, small vs 50 MB.
    for (const [label, s] of [['small', small], ['50MB', big]] as const) {
      const read: number[] = [];
      const record: number[] = [];
      const bytes: number[] = [];
      const written: number[] = [];
      for (let i = 0; i < EVENTS; i++) {
        const text = response(1_000_000 + i, filler);
        appendFileSync(s.file, text);
        written.push(Buffer.byteLength(text));
        const state = await sessionState(p, s.id);
        const from = state.usageRead[s.file] ?? 0;
        // The reading alone, as recordUsage does it.
        const r0 = cpu();
        const got = await newLines(s.file, from);
        const found = claudeUsage(got!.lines);
        await priceEntries('claude', found.entries);
        read.push(cpu() - r0);
        const c0 = cpu();
        await recordUsage(p, state, s.payload);
        record.push(cpu() - c0);
        bytes.push(((await sessionState(p, s.id)).usageRead[s.file] ?? 0) - from);
      }
      const rereads = bytes.filter((b, i) => b !== written[i]).length;
      report(`cost read per hook event (${label} transcript)`, { file_mb: round((readFileSync(s.file).length) / 1048576), read_cpu: stats(read), target_ms: 2, bytes_read_per_event: stats(bytes).median_ms, events_reading_more_than_written: rereads });
      report(`cost record per hook event (${label} transcript: read + usage event appended)`, { cpu: stats(record) });
    }
    // Beside it: what a hook's plain transition append costs (every hook already pays it).
    const plain: number[] = [];
    for (let i = 0; i < EVENTS; i++) {
      const c0 = cpu();
      await appendCommand(p, small.id, i % 2 ? { type: 'busy' } : { type: 'await', reason: 'turn-end' }, small.id, 'hook');
      plain.push(cpu() - c0);
    }
    report('cost baseline: a plain transition appended (busy/await)', { cpu: stats(plain) });

    // The target, side by side in one run: the same hook events of three sessions, alternating so load falls
    // on all alike. Each round: UserPromptSubmit (nothing new for any), the agent writes a response, then Stop:
    // `with usage` reads it and appends it with the hook's transition in one append; `two appends` is the
    // same reading appended on its own first (recordUsage, how the hook did it before); `without usage`
    // finds nothing new. Measured: the Stop hooks. Run with the power-loss syncs on (as shipped) and off
    // (their cost apart: every event is three fsynced loose objects, DESIGN.md's one commit per event).
    // Neither hook kills, delivers or captures a pane: the signal verb needs no runtime.
    const rt = {} as SessionRuntime;
    let n = 3;
    const responsesOf = async (id: string) => Object.values((await sessionState(p, id)).usage?.byFile ?? {}).reduce((k, b) => k + b.responses, 0);
    for (const syncs of [true, false]) {
      setPowerLossSyncs(syncs);
      const kinds = ['with', 'two', 'without'] as const;
      const ss = Object.fromEntries(await Promise.all(kinds.map(async (k) => [k, await session(`hook${k}${syncs}`, `00000000-0000-4000-8000-0000000000${(n++).toString().padStart(2, '0')}`)] as const))) as Record<(typeof kinds)[number], Awaited<ReturnType<typeof session>>>;
      for (const k of kinds) writeFileSync(ss[k].file, response(0, filler));
      const hook = async (k: (typeof kinds)[number], event: 'Stop' | 'UserPromptSubmit') => {
        const s = ss[k];
        const payload = { ...s.payload, hook_event_name: event };
        const c0 = cpu();
        if (k === 'two') await recordUsage(p, await sessionState(p, s.id), payload);
        const r = await signalSession(p, rt, s.id, event, payload);
        const ms = cpu() - c0;
        if (!r.changed || r.ignored.length) throw new Error(`bench hook ${event} on ${s.id}: ${JSON.stringify(r.ignored)} (changed ${r.changed})`);
        return ms;
      };
      for (const k of kinds) await hook(k, 'Stop');
      const cpuOf: Record<string, number[]> = { with: [], two: [], without: [] };
      let recorded = 0;
      for (let i = 0; i < EVENTS; i++) {
        for (const k of kinds) await hook(k, 'UserPromptSubmit');
        appendFileSync(ss.with.file, response(2_000_000 + i, filler));
        appendFileSync(ss.two.file, response(2_000_000 + i, filler));
        const before = await responsesOf(ss.with.id);
        const order = i % 3 === 0 ? kinds : i % 3 === 1 ? (['two', 'without', 'with'] as const) : (['without', 'with', 'two'] as const);
        for (const k of order) cpuOf[k]!.push(await hook(k, 'Stop'));
        if ((await responsesOf(ss.with.id)) > before) recorded++;
      }
      const [w, t, wo] = [stats(cpuOf.with!), stats(cpuOf.two!), stats(cpuOf.without!)];
      report(`cost Stop hook: a new response recorded vs none (power-loss syncs ${syncs ? 'on, as shipped' : 'off, for comparison'})`, {
        with_usage_one_append: w,
        with_usage_two_appends: t,
        without_usage: wo,
        added_cpu_ms_median: round(w.median_ms - wo.median_ms),
        added_cpu_ms_median_two_appends: round(t.median_ms - wo.median_ms),
        ratio_median: round(w.median_ms / wo.median_ms),
        target_added_ms: 2,
        responses_recorded: recorded,
        responses_written: EVENTS,
      });
    }
    setPowerLossSyncs(true);
  } finally {
    cleanup();
  }
}
