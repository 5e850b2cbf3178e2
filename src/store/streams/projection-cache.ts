import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import writeFileAtomic from 'write-file-atomic';

/**
 * Cache format versions (`format`); a file of any other version is ignored and rebuilt:
 *   1 — initial: stream id → { tip, state } (the key `threads` is kept for every stream kind).
 */
export const CACHE_FORMAT = 1;

/** A stream as of one tip: its folded state, or why it could not be folded. */
export type StreamSnapshot<S> = { readonly tip: string; readonly state: S } | { readonly tip: string; readonly problem: StreamProblem };

/** A stream that cannot be folded: which ref, which commit, and why. */
export interface StreamProblem {
  readonly id: string;
  readonly ref: string;
  readonly commit: string;
  readonly reason: string;
}

/**
 * The projection cache: rebuildable, never the source of truth. Every entry is keyed on the tip it
 * summarizes, so a ref moved by another process, `git fetch` or a hand edit simply misses.
 */
export class ProjectionCache<S> {
  constructor(readonly path: string) {}

  load(): Map<string, StreamSnapshot<S>> {
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(this.path, 'utf8'));
    } catch {
      // Absent or unreadable: the cache is only ever an optimization, rebuild from the refs.
      return new Map();
    }
    if (typeof raw !== 'object' || raw === null || (raw as { format?: unknown }).format !== CACHE_FORMAT) return new Map();
    const threads = (raw as { threads?: unknown }).threads;
    if (typeof threads !== 'object' || threads === null) return new Map();
    return new Map(Object.entries(threads as Record<string, StreamSnapshot<S>>));
  }

  async save(snapshots: ReadonlyMap<string, StreamSnapshot<S>>): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true });
    // Only folded states are cached: a problem is re-derived from the refs, never trusted from disk.
    const body = JSON.stringify({ format: CACHE_FORMAT, threads: Object.fromEntries([...snapshots].filter(([, s]) => 'state' in s)) });
    await writeFileAtomic(this.path, body, { fsync: false });
  }
}
