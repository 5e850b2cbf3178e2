import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PAYLOAD } from './chain.js';
import type { LogRecord } from './log-record.js';
import { gitSyncArgs } from './durable.js';
import { createPackedRefs } from './packed-create.js';

/** One log to extend: its ref, the tip it must still have (null: must not exist), the records to add. */
export interface BulkChain {
  readonly ref: string;
  readonly expected: string | null;
  readonly records: readonly LogRecord[];
}

/**
 * Appends to many logs at once (an NDJSON import of 50,000 events): the commits go into one pack
 * through `git fast-import` (writing them as 150,000 loose objects took ~90 s); refs that exist move
 * in one `git update-ref --stdin` transaction, each from its expected tip (git takes the same
 * `<ref>.lock` files our compare-and-swap takes); new refs go into packed-refs in one write. Each ref
 * moves once, so a log gets all its new records or none. Resolves with the tip written for each ref
 * that moved (null: the update transaction was refused, a ref had moved or was locked); the caller
 * checks each ref holds its tip and plans the others again.
 */
export async function bulkAppend(gitdir: string, chains: readonly BulkChain[]): Promise<Map<string, string> | null> {
  if (chains.length === 0) return new Map();
  const scratch = mkdtempSync(join(tmpdir(), 'trellis-import-'));
  const marks = join(scratch, 'marks');
  const staging = `refs/trellis-import/${process.pid}`;
  try {
    const tips: number[] = [];
    let mark = 0;
    // Fastest zlib level: an import is CPU-bound in deflate, and the next `git gc` repacks anyway.
    await feed(gitdir, ['-c', 'pack.compression=1', 'fast-import', '--quiet', '--done', `--export-marks=${marks}`], function* () {
      for (const chain of chains) {
        yield `reset ${staging}\n${chain.expected ? `from ${chain.expected}\n` : ''}\n`;
        for (const r of chain.records) {
          const sig = `${ident(r.author)} <> ${Math.floor(r.at.getTime() / 1000)} +0000`;
          const msg = Buffer.from(`${r.subject.replace(/\s+/g, ' ').trim()}\n`, 'utf8');
          const bytes = Buffer.from(r.bytes);
          yield `commit ${staging}\nmark :${++mark}\nauthor ${sig}\ncommitter ${sig}\ndata ${msg.length}\n${msg.toString('utf8')}`;
          // A commit on a merge (no payload) or on nothing starts from an empty tree; deleteall makes
          // every commit's tree exactly the one payload, as GitAppendLog.commit writes it.
          yield `deleteall\nM 100644 inline ${PAYLOAD}\ndata ${bytes.length}\n${bytes.toString('utf8')}\n`;
        }
        tips.push(mark);
      }
      yield 'done\n';
    });
    const oids = new Map<number, string>();
    for (const line of readFileSync(marks, 'latin1').split('\n')) {
      const m = /^:(\d+) ([0-9a-f]{40})$/.exec(line);
      if (m) oids.set(Number(m[1]), m[2]!);
    }
    // Refs that exist move in one `update-ref` transaction, each from its expected tip; new refs are
    // added to packed-refs in one write (createPackedRefs).
    const moving = chains.map((c, i) => ({ c, oid: oids.get(tips[i]!)! }));
    const updates = moving.filter(({ c }) => c.expected !== null).map(({ c, oid }) => `update ${c.ref} ${oid} ${c.expected}\n`);
    if (updates.length && !(await feedStatus(gitdir, ['update-ref', '--stdin'], `start\n${updates.join('')}commit\n`))) return null;
    const created = new Map(moving.filter(({ c }) => c.expected === null).map(({ c, oid }) => [c.ref, oid]));
    const written = new Map(moving.filter(({ c }) => c.expected !== null).map(({ c, oid }) => [c.ref, oid]));
    if (createPackedRefs(gitdir, created)) for (const [ref, oid] of created) written.set(ref, oid);
    return written;
  } finally {
    await feedStatus(gitdir, ['update-ref', '-d', staging], '');
    rmSync(scratch, { recursive: true, force: true });
  }
}

const ident = (s: string) => s.replace(/[<>\n\r]/g, '').trim() || 'unknown';

/** Streams `chunks` into git's stdin; rejects when git fails. */
async function feed(gitdir: string, args: string[], chunks: () => Generator<string>): Promise<void> {
  const child = spawn('git', ['--git-dir', gitdir, ...gitSyncArgs(), ...args], { stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const closed = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  child.stdin.on('error', () => {});
  let buf: string[] = [];
  let size = 0;
  for (const c of chunks()) {
    buf.push(c);
    size += c.length;
    if (size > 1 << 20) {
      if (!child.stdin.write(buf.join(''))) await new Promise((r) => child.stdin.once('drain', r));
      buf = [];
      size = 0;
    }
  }
  child.stdin.end(buf.join(''));
  const code = await closed;
  if (code !== 0) throw new Error(`git ${args[0]} failed: ${stderr.trim().split('\n')[0]}`);
}

function feedStatus(gitdir: string, args: string[], input: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['--git-dir', gitdir, ...gitSyncArgs(), ...args], { stdio: ['pipe', 'ignore', 'ignore'] });
    child.on('error', reject);
    child.on('close', (code) => resolve(code === 0));
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}
