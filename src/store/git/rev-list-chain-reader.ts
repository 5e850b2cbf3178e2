import { spawn } from 'node:child_process';
import { CatFileBatch, catFileChainReader, type Answer } from './cat-file-chain-reader.js';
import { PAYLOAD, type ChainEntry, type ChainReader, type ChainRequest, type ChainResult } from './chain.js';

/**
 * The bulk reader: one `git rev-list --parents` lists every commit of every chain, and each commit's
 * payload is requested from a buffered `git cat-file --batch` the moment rev-list names it, so no
 * request waits on another. It streams: a chain is handed to the caller as soon as its last commit is
 * listed and its payloads have arrived, so the caller folds it and its bytes are dropped, rather than
 * every event of every chain being held at once (686 MB at 50,000 threads before); and rev-list is
 * paused while too many payloads are outstanding. rev-list's walk lists a commit only after its child
 * (a parent enters the walk when its child leaves it), which is all this needs; a commit shared by two
 * chains listed between them leaves the later one undelivered, and it is read again by the fallback. A
 * repository rev-list refuses (a missing object) hands the chains not yet delivered to the walking
 * reader, which names the broken chain. So does a chain that meets a merge commit (issue 14): the
 * fallback walks every parent.
 */
export function revListChainReader(gitdir: string): ChainReader {
  const fallback = catFileChainReader(gitdir);
  const reader: ChainReader = {
    async read(requests) {
      const results: ChainResult[] = new Array(requests.length);
      await reader.readEach!(requests, (i, r) => {
        results[i] = r;
      });
      return results;
    },
    async readEach(requests, onResult) {
      if (requests.length === 0) return;
      const delivered = await streamChains(gitdir, requests, onResult);
      const rest = requests.map((r, i) => ({ r, i })).filter(({ i }) => !delivered[i]);
      if (rest.length === 0) return;
      const results = await fallback.read(rest.map(({ r }) => r));
      rest.forEach(({ i }, k) => onResult(i, results[k]!));
    },
  };
  return reader;
}

/**
 * Payload requests in flight before rev-list is paused, and when it resumes. The gap must exceed what
 * `cat-file --buffer` may hold back in its own output buffer (a few KiB: a dozen answers), or a pause
 * could wait on answers that are never flushed.
 */
const PAUSE_AT = 4_096;
const RESUME_AT = 2_048;

interface InFlight {
  readonly commits: string[];
  readonly payloads: Promise<Answer>[];
}

/** Lists and reads every chain; resolves with which requests were delivered (the rest need the fallback). */
function streamChains(gitdir: string, requests: readonly ChainRequest[], onResult: (i: number, r: ChainResult) => void): Promise<boolean[]> {
  return new Promise((resolve) => {
    const delivered: boolean[] = new Array(requests.length).fill(false);
    const batch = new CatFileBatch(gitdir, true);
    // Which chains wait for which commit next: a tip first, then each listed commit's parent.
    const waiting = new Map<string, number[]>();
    const inFlight = new Map<number, InFlight>();
    const tips = new Set<string>();
    requests.forEach((r, i) => {
      tips.add(r.tip);
      const list = waiting.get(r.tip);
      if (list) list.push(i);
      else waiting.set(r.tip, [i]);
    });
    const finishing: Promise<void>[] = [];
    let outstanding = 0;
    let paused = false;
    const finish = (i: number, reachedStop: boolean) => {
      const chain = inFlight.get(i) ?? { commits: [], payloads: [] };
      inFlight.delete(i);
      finishing.push(
        Promise.all(chain.payloads).then((answers) => {
          const entries: ChainEntry[] = [];
          // Listed newest first; a chain is folded oldest first.
          for (let k = chain.commits.length - 1; k >= 0; k--) {
            const a = answers[k];
            const oid = chain.commits[k]!;
            if (!a || a.type !== 'blob') {
              onResult(i, { ok: false, oid, reason: `commit ${oid} has no ${PAYLOAD}` });
              delivered[i] = true;
              return;
            }
            entries.push({ oid, bytes: a.data });
          }
          onResult(i, { ok: true, entries, reachedStop });
          delivered[i] = true;
        }),
      );
    };
    const onCommit = (commit: string, parent: string | null, merge: boolean) => {
      const chains = waiting.get(commit);
      if (!chains) return; // beyond every chain's stop: not read
      waiting.delete(commit);
      if (merge) {
        // A merge joins two clones' histories: this streaming walk follows one parent per chain, so the
        // chains that meet one are left undelivered and the DAG-walking fallback reads them whole.
        for (const i of chains) inFlight.delete(i);
        return;
      }
      const payload = batch.get(`${commit}:${PAYLOAD}`);
      if (++outstanding >= PAUSE_AT && !paused) {
        paused = true;
        revList.stdout.pause();
      }
      void payload.then(() => {
        if (--outstanding <= RESUME_AT && paused) {
          paused = false;
          revList.stdout.resume();
        }
      });
      for (const i of chains) {
        let chain = inFlight.get(i);
        if (!chain) inFlight.set(i, (chain = { commits: [], payloads: [] }));
        chain.commits.push(commit);
        chain.payloads.push(payload);
        const stopAt = requests[i]!.stopAt;
        if (parent === null) finish(i, false);
        else if (parent === stopAt) finish(i, true);
        else {
          const next = waiting.get(parent);
          if (next) next.push(i);
          else waiting.set(parent, [i]);
        }
      }
    };
    // A chain whose tip is its stop has nothing to read.
    requests.forEach((r, i) => {
      if (r.stopAt === r.tip) {
        waiting.set(r.tip, waiting.get(r.tip)!.filter((j) => j !== i));
        finish(i, true);
      }
    });

    const revList = spawn('git', ['--git-dir', gitdir, 'rev-list', '--parents', '--stdin'], { stdio: ['pipe', 'pipe', 'ignore'] });
    let rest = '';
    revList.stdout.setEncoding('latin1');
    revList.stdout.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop()!;
      for (const line of lines) onCommit(line.slice(0, 40), line.length >= 81 ? line.slice(41, 81) : null, line.length > 82);
    });
    let closed = false;
    const done = () => {
      if (closed) return;
      closed = true;
      batch.close();
      // Chains still waiting on a commit rev-list never listed go to the fallback; so does everything
      // not yet delivered when rev-list failed.
      void Promise.all(finishing).then(() => resolve(delivered));
    };
    revList.on('error', done);
    revList.on('close', done);
    revList.stdin.on('error', () => {}); // rev-list may exit before reading everything; 'close' reports it
    revList.stdin.end(`${[...tips].join('\n')}\n`);
  });
}
