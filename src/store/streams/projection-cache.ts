import { closeSync, existsSync, openSync, readFileSync, readSync, fstatSync, renameSync, rmSync, writeFileSync, appendFileSync, mkdirSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';

/**
 * Cache format versions (`format` in the header file); a cache of any other version is ignored and rebuilt:
 *   1 — one JSON file: stream id → { tip, state } (the key `threads` is kept for every stream kind).
 *   2 — a header file `{format, journal}` naming an append-only journal beside it: one JSON line per
 *       changed stream, `{id, tip, state}` or `{id, gone: true}`; the last line of an id wins. A save after
 *       one change appends that stream's line (O(change)); the journal is compacted (rewritten in slices
 *       that yield to the event loop, then switched to by an atomic rename of the header) once it holds
 *       more than twice the lines it needs.
 *   3 — as 2; the folded states carry what a merged history needs (thread reply ids and the last event
 *       key; issue 14), so a format-2 cache is rebuilt.
 *   4 — as 3; a thread's state carries each reply's own evidence and the thread's timeline (issue 34).
 *   5 — as 4; which reply carried which evidence is the state's `carried`, no longer a Reply field (issue 39).
 *   6 — as 5; a session's state carries its usage (issue 42): responses by key, turns, context, read offsets.
 */
export const CACHE_FORMAT = 6;

/** A stream as of one tip: its folded state, or why it could not be folded. */
export type StreamSnapshot<S> = { readonly tip: string; readonly state: S } | { readonly tip: string; readonly problem: StreamProblem };

/** A stream that cannot be folded: which ref, which commit, and why. */
export interface StreamProblem {
  readonly id: string;
  readonly ref: string;
  readonly commit: string;
  readonly reason: string;
}

/** Lines compacted per slice: ~2 ms of JSON at 600 bytes a thread, well inside a 20 ms event-loop budget. */
const SLICE = 500;
/** A journal this much longer than the streams it describes (or longer than `live × 2`) is compacted. */
const SLACK = 1_024;
/** Scanning back from the journal's end for one stream reads this much at a time, and at most this far. */
const SCAN_BLOCK = 1 << 20;
/** Past this, reading the stream's own chain through git is cheaper than scanning on (~10 ms either way). */
const MAX_SCAN = 8 << 20;

interface Header {
  readonly format: number;
  readonly journal: string;
}

/**
 * The projection cache: rebuildable, never the source of truth. Every entry is keyed on the tip it
 * summarizes, so a ref moved by another process, `git fetch` or a hand edit simply misses. Several
 * processes may append to one journal (each line is one `write` on an O_APPEND descriptor); a line lost
 * to a concurrent compaction, or torn by a crash, is only a miss.
 */
export class ProjectionCache<S> {
  /** Lines in the journal as this process last saw it, and whether the cache must be rewritten whole. */
  private lines = 0;
  private invalid = true;
  private compacting: Promise<void> | undefined;

  /** `slack`: journal lines beyond twice the streams before a rewrite (tests make it small). */
  constructor(
    readonly path: string,
    private readonly slack = SLACK,
  ) {}

  private header(): Header | null {
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(this.path, 'utf8'));
    } catch {
      return null;
    }
    if (typeof raw !== 'object' || raw === null) return null;
    const { format, journal } = raw as { format?: unknown; journal?: unknown };
    // The journal is a plain file name beside the header: never a path to follow elsewhere.
    if (format !== CACHE_FORMAT || typeof journal !== 'string' || !/^[A-Za-z0-9._-]+\.ndjson$/.test(journal)) return null;
    return { format, journal };
  }

  private journalPath(h: Header): string {
    return join(dirname(this.path), h.journal);
  }

  /** Every cached stream. Absent, unreadable or of another format: empty, and the next save rewrites it. */
  load(): Map<string, StreamSnapshot<S>> {
    const out = new Map<string, StreamSnapshot<S>>();
    const h = this.header();
    let text: string;
    try {
      if (!h) throw new Error('no header');
      text = readFileSync(this.journalPath(h), 'utf8');
    } catch {
      this.invalid = true;
      this.lines = 0;
      return out;
    }
    let lines = 0;
    for (let at = 0; at < text.length; ) {
      let nl = text.indexOf('\n', at);
      if (nl < 0) nl = text.length;
      if (nl > at) {
        lines++;
        const entry = parseLine<S>(text.slice(at, nl));
        if (entry) {
          if ('gone' in entry) out.delete(entry.id);
          else out.set(entry.id, { tip: entry.tip, state: entry.state });
        }
      }
      at = nl + 1;
    }
    this.invalid = false;
    this.lines = lines;
    return out;
  }

  /**
   * One stream's last cached snapshot, read back from the journal's end without loading the rest: a
   * CLI write starts from it instead of reading the stream's chain through git.
   */
  lookup(id: string): StreamSnapshot<S> | undefined {
    const h = this.header();
    if (!h) return undefined;
    let fd: number;
    try {
      fd = openSync(this.journalPath(h), 'r');
    } catch {
      return undefined;
    }
    try {
      const size = fstatSync(fd).size;
      const needle = Buffer.from(`\n{"id":${JSON.stringify(id)},`);
      let end = size;
      let carry = Buffer.alloc(0);
      while (end > 0 && size - end < MAX_SCAN) {
        const start = Math.max(0, end - SCAN_BLOCK);
        const block = Buffer.alloc(end - start);
        readSync(fd, block, 0, block.length, start);
        // Prefix a newline at the file's start so the first line matches like any other.
        const hay = Buffer.concat([start === 0 ? Buffer.from('\n') : Buffer.alloc(0), block, carry]);
        const hit = hay.lastIndexOf(needle);
        if (hit >= 0) {
          const entry = parseLine<S>(readLineAt(fd, start - (start === 0 ? 1 : 0) + hit + 1, size));
          if (!entry || 'gone' in entry) return undefined;
          return { tip: entry.tip, state: entry.state };
        }
        // Keep the start of this block: a match may straddle the boundary.
        carry = block.subarray(0, Math.min(block.length, needle.length + 256));
        end = start;
      }
      return undefined;
    } finally {
      closeSync(fd);
    }
  }

  /** Whether the cache must be written whole: absent, of another format, or a journal with too much slack. */
  wantsRewrite(streams: number): boolean {
    return this.invalid || this.lines > 2 * streams + this.slack;
  }

  /**
   * Appends what changed: `changes` maps an id to its snapshot (only folded states are cached; a problem
   * is re-derived from the refs, so it is saved as gone) or to null for a stream that is gone. O(change).
   * Without a valid cache on disk nothing is written: only a process holding every stream rewrites it.
   */
  async append(changes: ReadonlyMap<string, StreamSnapshot<S> | null>): Promise<void> {
    if (this.compacting) await this.compacting;
    if (changes.size === 0) return;
    const h = this.header();
    if (!h) return;
    let text = '';
    for (const [id, snap] of changes) text += `${lineOf(id, snap)}\n`;
    try {
      appendFileSync(this.journalPath(h), text);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // compacted away meanwhile: a miss
      throw err;
    }
    this.lines += changes.size;
  }

  /** Writes every stream in `all` into a fresh journal (in slices that yield to the event loop) and switches to it. */
  rewrite(all: ReadonlyMap<string, StreamSnapshot<S>>): Promise<void> {
    return (this.compacting ?? Promise.resolve()).then(() => this.compact(all));
  }

  /** Rewrites the whole cache into a fresh journal, a slice at a time, then switches the header to it. */
  private compact(all: ReadonlyMap<string, StreamSnapshot<S>>): Promise<void> {
    // The streams as of now; later changes are appended to the new journal by the saves that follow.
    const entries = [...all];
    const run = (async () => {
      const dir = dirname(this.path);
      mkdirSync(dir, { recursive: true });
      const stem = basename(this.path).replace(/\.json$/, '');
      const journal = `${stem}.${Date.now().toString(36)}-${process.pid}-${Math.random().toString(36).slice(2, 8)}.ndjson`;
      const fh = await open(join(dir, journal), 'w');
      let lines = 0;
      try {
        let slice: string[] = [];
        for (const [id, snap] of entries) {
          if (!('state' in snap)) continue;
          slice.push(lineOf(id, snap));
          lines++;
          if (slice.length === SLICE) {
            await fh.write(`${slice.join('\n')}\n`);
            slice = [];
            await yieldToLoop();
          }
        }
        if (slice.length) await fh.write(`${slice.join('\n')}\n`);
      } finally {
        await fh.close();
      }
      const previous = this.header();
      const tmp = `${this.path}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify({ format: CACHE_FORMAT, journal }));
      renameSync(tmp, this.path);
      if (previous && previous.journal !== journal) rmSync(join(dir, previous.journal), { force: true });
      this.invalid = false;
      this.lines = lines;
    })();
    this.compacting = run.finally(() => {
      this.compacting = undefined;
    });
    return this.compacting;
  }

  /** For `trellis doctor`: the format on disk and how many streams and journal lines the cache holds. */
  inspect(): { exists: boolean; format: number | null; streams: number; lines: number } {
    let format: number | null = null;
    const exists = existsSync(this.path);
    try {
      const raw = JSON.parse(readFileSync(this.path, 'utf8')) as { format?: unknown };
      format = typeof raw?.format === 'number' ? raw.format : null;
    } catch {}
    const streams = this.load().size;
    return { exists, format: this.invalid ? format : CACHE_FORMAT, streams, lines: this.lines };
  }
}

/** The line that starts at `offset`, read in blocks up to its newline (or the file's end). */
function readLineAt(fd: number, offset: number, size: number): string {
  const parts: Buffer[] = [];
  for (let at = offset; at < size; ) {
    const block = Buffer.alloc(Math.min(64 * 1024, size - at));
    const n = readSync(fd, block, 0, block.length, at);
    if (n <= 0) break;
    const nl = block.subarray(0, n).indexOf(10);
    if (nl >= 0) {
      parts.push(block.subarray(0, nl));
      break;
    }
    parts.push(block.subarray(0, n));
    at += n;
  }
  return Buffer.concat(parts).toString('utf8');
}

function lineOf<S>(id: string, snap: StreamSnapshot<S> | null): string {
  return snap && 'state' in snap ? JSON.stringify({ id, tip: snap.tip, state: snap.state }) : JSON.stringify({ id, gone: true });
}

function parseLine<S>(line: string): { id: string; tip: string; state: S } | { id: string; gone: true } | undefined {
  try {
    const e = JSON.parse(line) as { id?: unknown; tip?: unknown; state?: unknown; gone?: unknown };
    if (typeof e.id !== 'string') return undefined;
    if (e.gone === true) return { id: e.id, gone: true };
    if (typeof e.tip !== 'string' || typeof e.state !== 'object' || e.state === null) return undefined;
    return { id: e.id, tip: e.tip, state: e.state as S };
  } catch {
    // A line torn by a crash, or two appends run together: a miss, never an error.
    return undefined;
  }
}
