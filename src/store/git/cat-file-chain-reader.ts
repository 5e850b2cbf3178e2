import { spawn } from 'node:child_process';
import { PAYLOAD, type ChainReader, type ChainRequest, type ChainResult } from './chain.js';
import { commitParents, walkChain } from './dag-walk.js';

export type Answer = { type: string; data: Buffer } | null;

/**
 * Reads chains through one interactive `git cat-file --batch`, every chain walking at once so the pipe
 * stays full: ~30x faster than object by object through isomorphic-git (bench: chain-read). Each step
 * waits for the commit before asking for its parent, so the rev-list reader beats it in bulk; this one
 * stays as the fallback that names a broken chain's commit precisely.
 */
export function catFileChainReader(gitdir: string): ChainReader {
  return {
    async read(requests) {
      if (requests.length === 0) return [];
      const batch = new CatFileBatch(gitdir);
      try {
        return await Promise.all(requests.map((r) => readOne(batch, r)));
      } finally {
        batch.close();
      }
    },
  };
}

/** Walks one chain through every parent (see walkChain), asking for a commit and its payload at once. */
function readOne(batch: CatFileBatch, request: ChainRequest): Promise<ChainResult> {
  return walkChain(request, async (oid) => {
    const [commit, payload] = await Promise.all([batch.get(oid), batch.get(`${oid}:${PAYLOAD}`)]);
    if (!commit || commit.type !== 'commit') return { error: `commit ${oid} is missing from the object store` };
    return { parents: commitParents(commit.data), payload: payload && payload.type === 'blob' ? payload.data : null };
  });
}

export class CatFileBatch {
  private readonly proc;
  // A FIFO with a moving head: Array#shift on ~100,000 waiters is quadratic (it cost 1.9 s of a 3 s read).
  private waiting: ((a: Answer) => void)[] = [];
  private head = 0;
  private outbox: string[] = [];
  private buf: Buffer = Buffer.alloc(0);
  private failure: Error | undefined;

  constructor(gitdir: string, buffered = false) {
    // --buffer: git flushes only when stdin ends; right when every request is known up front.
    this.proc = spawn('git', ['--git-dir', gitdir, 'cat-file', '--batch', ...(buffered ? ['--buffer'] : [])], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    this.proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    this.proc.stdout.on('data', (chunk: Buffer) => this.receive(chunk));
    this.proc.on('error', (err) => this.fail(err));
    // 'close', not 'exit': git may exit before its last answers are read from the pipe.
    this.proc.on('close', (code) => {
      if (this.head < this.waiting.length) this.fail(new Error(`git cat-file exited with ${code}: ${stderr.trim()}`));
    });
    this.proc.stdin.on('error', (err) => this.fail(err));
  }

  get(spec: string): Promise<Answer> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      // One write per tick instead of one per object keeps syscalls down when thousands are queued.
      if (this.outbox.push(`${spec}\n`) === 1) queueMicrotask(() => this.flush());
    });
  }

  close(): void {
    this.proc.stdin.end();
  }

  private flush(): void {
    const text = this.outbox.join('');
    this.outbox = [];
    this.proc.stdin.write(text);
  }

  private fail(err: Error): void {
    this.failure = err;
    // Unanswered requests read as missing; the caller reports the chain by name.
    const pending = this.waiting.slice(this.head);
    this.waiting = [];
    this.head = 0;
    for (const w of pending) w(null);
  }

  private receive(chunk: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    let pos = 0;
    for (;;) {
      const nl = this.buf.indexOf(10, pos);
      if (nl < 0) break;
      const header = this.buf.toString('latin1', pos, nl);
      const parts = header.split(' ');
      if (parts.length === 3 && /^[0-9a-f]{40}$/.test(parts[0]!)) {
        const size = Number(parts[2]);
        const start = nl + 1;
        if (this.buf.length < start + size + 1) break;
        this.answer({ type: parts[1]!, data: this.buf.subarray(start, start + size) });
        pos = start + size + 1;
      } else {
        // "<spec> missing" or "<spec> ambiguous"
        this.answer(null);
        pos = nl + 1;
      }
    }
    this.buf = pos === this.buf.length ? Buffer.alloc(0) : Buffer.from(this.buf.subarray(pos));
  }

  private answer(a: Answer): void {
    const w = this.waiting[this.head];
    if (!w) return;
    this.waiting[this.head++] = undefined as never;
    if (this.head === this.waiting.length) {
      this.waiting = [];
      this.head = 0;
    }
    w(a);
  }
}
