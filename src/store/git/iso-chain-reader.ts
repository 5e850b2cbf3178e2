import * as fs from 'node:fs';
import { PAYLOAD, type ChainReader, type ChainRequest, type ChainResult } from './chain.js';
import { walkChain } from './dag-walk.js';

/**
 * Reads chains object by object through isomorphic-git: cheapest for catching up a few chains by an event
 * or two (no spawn). Loaded lazily: isomorphic-git is ~60 ms of start-up that most CLI verbs never need.
 */
export function isoChainReader(gitdir: string): ChainReader {
  const cache = {};
  async function readOne(request: ChainRequest): Promise<ChainResult> {
    const git = (await import('isomorphic-git')).default;
    return walkChain(request, async (oid) => {
      try {
        const { commit } = await git.readCommit({ fs, gitdir, oid, cache });
        const { tree } = await git.readTree({ fs, gitdir, oid: commit.tree, cache });
        const entry = tree.find((e) => e.path === PAYLOAD && e.type === 'blob');
        const payload = entry ? (await git.readBlob({ fs, gitdir, oid: entry.oid, cache })).blob : null;
        return { parents: commit.parent, payload };
      } catch (err) {
        return { error: `cannot read commit ${oid}: ${(err as Error).message}` };
      }
    });
  }
  return { read: (requests) => Promise.all(requests.map(readOne)) };
}
