import { spawn } from 'node:child_process';
import { EVENT_FORMAT, type ThreadEvent } from '../src/events/index.js';

/**
 * Generates a repository of `threads` threads holding `events` events in all, through one
 * `git fast-import` stream: appending 50,000 events one CAS at a time would take minutes, and the
 * benchmark measures reading, not generating. Threads get 1..9 events (mean events/threads).
 */
export async function generateThreads(dir: string, threads: number, events: number): Promise<string[]> {
  const child = spawn('git', ['fast-import', '--quiet', '--done'], { cwd: dir, stdio: ['pipe', 'inherit', 'inherit'] });
  const closed = new Promise<void>((resolve, reject) => child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`fast-import exited ${code}`)))));
  const ids: string[] = [];
  let remaining = events;
  const base = Date.UTC(2026, 0, 1);
  let chunk = '';
  const flush = async () => {
    if (!child.stdin.write(chunk)) await new Promise((r) => child.stdin.once('drain', r));
    chunk = '';
  };
  for (let t = 0; t < threads; t++) {
    const id = `g${t.toString(36).padStart(6, '0')}`;
    ids.push(id);
    const left = threads - t;
    const n = t === threads - 1 ? remaining : Math.max(1, Math.min(9, remaining - (left - 1), 1 + ((t * 7919) % 9)));
    remaining -= n;
    for (let k = 1; k <= n; k++) {
      const at = new Date(base + t * 60_000 + k * 1_000).toISOString();
      const event = eventFor(t, k, at);
      const json = JSON.stringify(event);
      const secs = Math.floor(Date.parse(at) / 1000);
      const msg = `${event.type}: generated`;
      chunk +=
        `commit refs/trellis/issues/${id}\n` +
        `author gen <> ${secs} +0000\ncommitter gen <> ${secs} +0000\n` +
        `data ${Buffer.byteLength(msg)}\n${msg}\n` +
        `M 100644 inline event.json\ndata ${Buffer.byteLength(json)}\n${json}\n\n`;
    }
    if (chunk.length > 1 << 20) await flush();
  }
  chunk += 'done\n';
  await flush();
  child.stdin.end();
  await closed;
  return ids;
}

function eventFor(t: number, k: number, at: string): ThreadEvent {
  const meta = { v: EVENT_FORMAT, id: `g${t.toString(36)}-${k}`, at, by: `author${t % 17}`, clock: k } as const;
  if (k === 1) {
    return {
      ...meta,
      type: 'opened',
      data: { concern: `Generated concern ${t}`, body: `Body of thread ${t}. `.repeat(8), nodes: [`area${t % 50}/node${t % 1000}`] },
    };
  }
  if (k % 4 === 0) return { ...meta, type: 'remarked', data: { body: `Remark ${k} on thread ${t}. `.repeat(4), reading: `r${k}`, evidence: [] } };
  return { ...meta, type: 'replied', data: { body: `Reply ${k} on thread ${t}. `.repeat(4), evidence: [] } };
}
