/**
 * What reading the agents' own usage costs per hook event (issue 42; target: at most 2 ms of CPU per
 * event), and that a 50 MB transcript is never re-read from the start. In one process, side by side:
 *
 * - `read`: the reading alone (new bytes, the lines that can carry usage parsed, priced with the table
 *   loaded) for one hook event after the agent wrote one more response, against a small transcript and
 *   against a 50 MB one (the same work: only the new bytes; the ratio is the proof);
 * - `record`: the whole recordUsage of a hook event (read + the `usage` event appended to the session's
 *   log, a git commit), beside a plain transition's append (`busy`/`await`, what every hook already costs);
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
import { recordUsage } from '../src/store/sessions/usage-verb.js';
import { claudeUsage, newLines, READ_LIMIT } from '../src/store/sessions/usage-read.js';
import { priceEntries } from '../src/store/sessions/usage-price.js';
import { appendCommand, sessionState } from '../src/store/sessions/verbs.js';

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
  } finally {
    cleanup();
  }
}
