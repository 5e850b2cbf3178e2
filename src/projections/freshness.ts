import type { ThreadState } from './thread.js';

/**
 * The one top-level freshness stamp over the merged set (spec §2.1 rule 8). `revision` sums every
 * thread's event count, so any write changes it, even two writes in the same millisecond that leave the
 * counts and `latest` alone (a resolve followed by an unresolve).
 */
export interface Freshness {
  readonly open: number;
  readonly threads: number;
  readonly replies: number;
  readonly latest: string | null;
  readonly revision: number;
}

/** What one issue contributes to the stamp; every store can say this much about its issues. */
export interface FreshnessEntry {
  readonly status: string;
  readonly replies: number;
  readonly activity: string;
  readonly revision: number;
}

export const threadFreshness = (t: ThreadState): FreshnessEntry => ({
  status: t.status,
  replies: t.replies.length,
  activity: t.updated,
  revision: t.clock,
});

export function freshness(entries: Iterable<FreshnessEntry>): Freshness {
  let open = 0;
  let threads = 0;
  let replies = 0;
  let revision = 0;
  let latest: string | null = null;
  for (const e of entries) {
    threads++;
    if (e.status === 'open') open++;
    replies += e.replies;
    revision += e.revision;
    if (latest === null || e.activity > latest) latest = e.activity;
  }
  return { open, threads, replies, latest, revision };
}
