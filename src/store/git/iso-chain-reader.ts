import * as fs from 'node:fs';
import { PAYLOAD, type ChainEntry, type ChainReader, type ChainRequest, type ChainResult } from './chain.js';

/**
 * Reads chains object by object through isomorphic-git: cheapest for catching up a few chains by an event
 * or two (no spawn). Loaded lazily: isomorphic-git is ~60 ms of start-up that most CLI verbs never need.
 */
export function isoChainReader(gitdir: string): ChainReader {
  const cache = {};
  async function readOne({ tip, stopAt }: ChainRequest): Promise<ChainResult> {
    const git = (await import('isomorphic-git')).default;
    const entries: ChainEntry[] = [];
    let oid: string | null = tip;
    while (oid !== null && oid !== stopAt) {
      const at: string = oid;
      try {
        const { commit } = await git.readCommit({ fs, gitdir, oid, cache });
        const { tree } = await git.readTree({ fs, gitdir, oid: commit.tree, cache });
        const entry = tree.find((e) => e.path === PAYLOAD && e.type === 'blob');
        if (!entry) return { ok: false, oid, reason: `commit ${oid} has no ${PAYLOAD}` };
        const { blob } = await git.readBlob({ fs, gitdir, oid: entry.oid, cache });
        entries.push({ oid, bytes: blob });
        oid = commit.parent[0] ?? null;
      } catch (err) {
        return { ok: false, oid: at, reason: `cannot read commit ${oid}: ${(err as Error).message}` };
      }
    }
    return { ok: true, entries: entries.reverse(), reachedStop: stopAt !== null && oid === stopAt };
  }
  return { read: (requests) => Promise.all(requests.map(readOne)) };
}
