import { PAYLOAD, type ChainEntry, type ChainRequest, type ChainResult } from './chain.js';

/** One commit as a walker needs it: its parents and its payload (null when it has none). */
export type CommitRead = { readonly parents: readonly string[]; readonly payload: Uint8Array | null } | { readonly error: string };

/**
 * Walks the history of `tip` through every parent, not only the first: a log that two clones wrote to
 * is joined by a merge commit (two parents, no payload; issue 14). A commit with one parent or none is an
 * event and must carry the payload. Reading stops at `stopAt`; but when the part read holds a merge, the
 * other parent's side may reach below `stopAt` into events already folded, so the walk starts over from
 * the root and reports `reachedStop: false`: the caller folds everything again, in its own order.
 * Entries come back oldest first along a linear chain; across a merge in reverse walk order (the fold
 * sorts by its own key).
 */
export async function walkChain({ tip, stopAt }: ChainRequest, read: (oid: string) => Promise<CommitRead>): Promise<ChainResult> {
  const first = await walk(tip, stopAt, read);
  if (first.ok && first.sawMerge && stopAt !== null) return (await walk(tip, null, read)).result;
  return first.result;
}

type Walked = { ok: true; sawMerge: boolean; result: ChainResult } | { ok: false; result: ChainResult };

async function walk(tip: string, stopAt: string | null, read: (oid: string) => Promise<CommitRead>): Promise<Walked> {
  const entries: ChainEntry[] = [];
  const seen = new Set<string>([tip]);
  const queue = [tip];
  let reachedStop = stopAt !== null && tip === stopAt;
  let sawMerge = false;
  for (let head = 0; head < queue.length; head++) {
    const oid = queue[head]!;
    if (oid === stopAt) continue;
    const commit = await read(oid);
    if ('error' in commit) return { ok: false, result: { ok: false, oid, reason: commit.error } };
    if (commit.parents.length > 1) sawMerge = true;
    else if (commit.payload === null) return { ok: false, result: { ok: false, oid, reason: `commit ${oid} has no ${PAYLOAD}` } };
    else entries.push({ oid, bytes: commit.payload });
    for (const p of commit.parents) {
      if (p === stopAt) reachedStop = true;
      if (!seen.has(p)) {
        seen.add(p);
        queue.push(p);
      }
    }
  }
  return { ok: true, sawMerge, result: { ok: true, entries: entries.reverse(), reachedStop } };
}

/** The parents named in a raw commit object's headers. */
export function commitParents(commit: Buffer): string[] {
  const headersEnd = commit.indexOf('\n\n');
  const head = commit.toString('latin1', 0, headersEnd < 0 ? commit.length : headersEnd);
  const parents: string[] = [];
  for (const line of head.split('\n')) if (line.startsWith('parent ')) parents.push(line.slice(7, 47));
  return parents;
}
