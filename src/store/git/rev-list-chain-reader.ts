import { spawn } from 'node:child_process';
import { CatFileBatch, catFileChainReader, type Answer } from './cat-file-chain-reader.js';
import { PAYLOAD, type ChainEntry, type ChainReader, type ChainRequest, type ChainResult } from './chain.js';

/**
 * The bulk reader: one `git rev-list --parents` lists every commit of every chain, and each commit's
 * payload is requested from a buffered `git cat-file --batch` the moment rev-list names it, so no
 * request waits on another. Reads 10,000 chains / 50,000 events about twice as fast as walking them
 * through interactive cat-file. A repository rev-list refuses (a missing object) falls back to the
 * walking reader, which names the broken chain.
 */
export function revListChainReader(gitdir: string): ChainReader {
  const fallback = catFileChainReader(gitdir);
  return {
    async read(requests) {
      if (requests.length === 0) return [];
      const listed = await listChains(gitdir, [...new Set(requests.map((r) => r.tip))]);
      if (!listed) return fallback.read(requests);
      return Promise.all(requests.map((r) => assemble(r, listed.parentOf, listed.payloads)));
    },
  };
}

interface Listed {
  readonly parentOf: Map<string, string | null>;
  readonly payloads: Map<string, Promise<Answer>>;
}

function listChains(gitdir: string, tips: readonly string[]): Promise<Listed | null> {
  return new Promise((resolve) => {
    const batch = new CatFileBatch(gitdir, true);
    const parentOf = new Map<string, string | null>();
    const payloads = new Map<string, Promise<Answer>>();
    const revList = spawn('git', ['--git-dir', gitdir, 'rev-list', '--parents', '--stdin'], { stdio: ['pipe', 'pipe', 'ignore'] });
    let rest = '';
    revList.stdout.setEncoding('latin1');
    revList.stdout.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop()!;
      for (const line of lines) {
        const commit = line.slice(0, 40);
        parentOf.set(commit, line.length >= 81 ? line.slice(41, 81) : null);
        payloads.set(commit, batch.get(`${commit}:${PAYLOAD}`));
      }
    });
    revList.on('error', () => {
      batch.close();
      resolve(null);
    });
    revList.on('close', (code) => {
      batch.close();
      resolve(code === 0 ? { parentOf, payloads } : null);
    });
    revList.stdin.on('error', () => {}); // rev-list may exit before reading everything; 'close' reports it
    revList.stdin.end(`${tips.join('\n')}\n`);
  });
}

async function assemble({ tip, stopAt }: ChainRequest, parentOf: Map<string, string | null>, payloads: Map<string, Promise<Answer>>): Promise<ChainResult> {
  const chain: string[] = [];
  let oid: string | null = tip;
  while (oid !== null && oid !== stopAt) {
    chain.push(oid);
    const parent: string | null | undefined = parentOf.get(oid);
    if (parent === undefined) return { ok: false, oid, reason: `commit ${oid} is missing from the object store` };
    oid = parent;
  }
  const entries: ChainEntry[] = [];
  for (const commit of chain.reverse()) {
    const payload = await payloads.get(commit);
    if (!payload || payload.type !== 'blob') return { ok: false, oid: commit, reason: `commit ${commit} has no ${PAYLOAD}` };
    entries.push({ oid: commit, bytes: payload.data });
  }
  return { ok: true, entries, reachedStop: stopAt !== null && oid === stopAt };
}
