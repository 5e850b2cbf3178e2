import { TrellisError } from '../../events/index.js';
import type { GitAppendLog } from '../git/append-log.js';
import { createPackedRefs } from '../git/packed-create.js';
import { readTips } from '../git/refs.js';
import { gitSyncArgs } from '../git/durable.js';
import { gitRaw } from '../git/run-git.js';
import { joinRef, type JoinOutcome } from './join-ref.js';
import { parseStreamRef, refPrefixOf, SYNCED_KINDS, type SyncedKind } from '../streams/stream-names.js';

/**
 * The stream kinds that travel (the list's `synced` ones): issue threads, sessions and eval readings, each
 * an append-only event log that merges. `refs/trellis/wip/*` does not travel (stream-names.ts says why).
 */
export { SYNCED_KINDS };

export type SyncMode = 'both' | 'push-only' | 'fetch-only';

export interface SyncOptions {
  /** The remote's name (`git remote`); default `origin`. */
  readonly remote?: string;
  readonly mode?: SyncMode;
  /** Who writes merge commits, and when. */
  readonly by: string;
  readonly now: () => Date;
  /** Where git runs for fetch and push (the working tree, so a relative remote URL means what it says). */
  readonly cwd?: string;
  /**
   * False when nobody is at a terminal (the server): git and ssh must fail on a remote that wants a
   * password rather than wait for one. Credential helpers and agents still answer.
   */
  readonly interactive?: boolean;
}

/** The environment for git's network verbs: unchanged at a terminal, prompt-free otherwise. */
function remoteEnv(interactive: boolean): NodeJS.ProcessEnv | undefined {
  if (interactive) return undefined;
  return { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_SSH_COMMAND: process.env.GIT_SSH_COMMAND ?? 'ssh -o BatchMode=yes' };
}

/** What a sync did, ref by ref (refs are full names: `refs/trellis/issues/<id>`). */
export interface SyncSummary {
  readonly remote: string;
  readonly adopted: string[];
  readonly fastForwarded: string[];
  readonly merged: string[];
  /** Refs where the local history already held the remote's (they are pushed). */
  readonly kept: number;
  readonly pushed: string[];
  /** Fetch-and-push rounds (more than one when the remote moved during the push). */
  readonly rounds: number;
}

/** Pushes rejected because the remote moved are fetched, merged and pushed again this many times. */
const MAX_ROUNDS = 5;

const REMOTE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/**
 * `trellis sync`: fetches the remote's `refs/trellis/{issues,sessions,evals}/*` into a staging namespace
 * (`refs/trellis-sync/<remote>/`, outside what the stores read), joins each into the local ref (joinRef),
 * then pushes the local refs without force; a push the remote rejects (it moved) fetches and joins again,
 * at most MAX_ROUNDS times. Needs no configuration: a remote that got plain `git push` of these refs is
 * joined the same way on the next sync.
 */
export async function syncRefs(log: GitAppendLog, opts: SyncOptions): Promise<SyncSummary> {
  const remote = opts.remote ?? 'origin';
  const mode = opts.mode ?? 'both';
  const cwd = opts.cwd ?? log.gitdir;
  const env = remoteEnv(opts.interactive ?? true);
  await requireRemote(cwd, remote);
  const summary = { remote, adopted: [] as string[], fastForwarded: [] as string[], merged: [] as string[], kept: 0, pushed: [] as string[], rounds: 0 };
  const pushed = new Set<string>();
  const kept = new Set<string>();
  const record = (ref: string, outcome: JoinOutcome) => {
    if (outcome === 'adopted') summary.adopted.push(ref);
    else if (outcome === 'fast-forwarded') summary.fastForwarded.push(ref);
    else if (outcome === 'merged') summary.merged.push(ref);
    else if (outcome === 'kept') kept.add(ref);
    summary.kept = kept.size;
  };
  const merger = { name: opts.by, at: opts.now, subject: `merge: sync with ${remote}` };
  for (let round = 1; round <= MAX_ROUNDS; round++) {
    summary.rounds = round;
    if (mode !== 'push-only') {
      const staged = await fetchStaged(cwd, log.gitdir, remote, env);
      for (const ref of adoptAll(log, staged)) {
        summary.adopted.push(ref);
        staged.delete(ref.slice('refs/trellis/'.length));
      }
      await eachLimited([...staged], 4, async ([name, tip]) => record(`refs/trellis/${name}`, await joinRef(log, `refs/trellis/${name}`, tip, merger)));
    }
    if (mode === 'fetch-only') return summary;
    const { pushed: moved, rejected } = await push(cwd, remote, env);
    for (const ref of moved) if (!pushed.has(ref)) (pushed.add(ref), summary.pushed.push(ref));
    if (rejected.length === 0) return summary;
    if (mode === 'push-only') {
      throw new TrellisError('APPEND_CONFLICT', `the remote ${remote} moved: ${rejected.length} ref(s) rejected (${rejected.slice(0, 3).join(', ')}); run 'trellis sync ${remote}' to merge them first`);
    }
  }
  throw new TrellisError('APPEND_CONFLICT', `the remote ${remote} kept moving through ${MAX_ROUNDS} rounds of fetch, merge and push; run trellis sync again`);
}

/** Past this many refs to adopt, they are created in one packed-refs write rather than one by one. */
const BULK_ADOPT = 32;

/**
 * A first sync of a clone adopts every ref (1,000 loose refs, one fsync each, took ~7 s): when there are
 * many, they are created together (createPackedRefs, all or none, under git's packed-refs lock). A ref
 * some writer created as a loose file at the same moment is not at the remote's tip afterwards: it is
 * left to joinRef like any other. Returns the refs adopted.
 */
function adoptAll(log: GitAppendLog, staged: ReadonlyMap<string, string>): string[] {
  const absent = new Map<string, string>();
  const local = new Map(SYNCED_KINDS.map((k) => [k, log.tips(refPrefixOf(k))]));
  for (const [name, tip] of staged) {
    const ref = `refs/trellis/${name}`;
    const s = parseStreamRef(ref);
    if (!s?.id || !local.get(s.kind as SyncedKind)?.has(s.id)) absent.set(ref, tip);
  }
  if (absent.size < BULK_ADOPT || !createPackedRefs(log.gitdir, absent)) return [];
  return [...absent].filter(([ref, tip]) => log.tip(ref) === tip).map(([ref]) => ref);
}

async function requireRemote(cwd: string, remote: string): Promise<void> {
  if (!REMOTE_NAME.test(remote)) throw new TrellisError('INVALID_INPUT', `'${remote}' is not a remote name; list them with 'git remote -v'`);
  const r = await gitRaw(cwd, ['remote']);
  if (!r.stdout.split('\n').includes(remote)) {
    throw new TrellisError('NOT_FOUND', `no git remote '${remote}'; add one with 'git remote add ${remote} <url>' (or name one: trellis sync <remote>)`);
  }
}

const stagingPrefix = (remote: string) => `refs/trellis-sync/${remote}/`;

/** Fetches the remote's logs into the staging namespace; their tips by `<kind>/<id>`. */
async function fetchStaged(cwd: string, gitdir: string, remote: string, env: NodeJS.ProcessEnv | undefined): Promise<Map<string, string>> {
  const specs = SYNCED_KINDS.map((k) => `+${refPrefixOf(k)}*:${stagingPrefix(remote)}${k}/*`);
  // The fetch writes the commit-graph of what it brought (git's own `fetch.writeCommitGraph`): a clone's
  // first cold read of thousands of fetched threads then walks the graph instead of unpacking every
  // commit (10k threads: 830 → 744 ms, bench speed). gc --auto writes it too, but only once loose
  // objects pile up, which a fetched pack never does.
  const r = await gitRaw(cwd, [...gitSyncArgs(), '-c', 'fetch.writeCommitGraph=true', 'fetch', '--quiet', '--no-tags', '--prune', '--no-write-fetch-head', remote, ...specs], env);
  if (r.code !== 0) throw new TrellisError('REMOTE_FAILED', `cannot fetch from ${remote}: ${firstLine(r.stderr)}`);
  // A copy: the caller strikes out what it adopted, and a read may hand out a cached map.
  return new Map(readTips(gitdir, stagingPrefix(remote), { relative: true }));
}

/** Pushes every local log (never forced); which refs moved on the remote and which were rejected. */
async function push(cwd: string, remote: string, env: NodeJS.ProcessEnv | undefined): Promise<{ pushed: string[]; rejected: string[] }> {
  const specs = SYNCED_KINDS.map((k) => `${refPrefixOf(k)}*:${refPrefixOf(k)}*`);
  const r = await gitRaw(cwd, ['push', '--porcelain', remote, ...specs], env);
  const pushed: string[] = [];
  const rejected: string[] = [];
  // Porcelain lines: "<flag>\t<from>:<to>\t<summary>"; ' ' fast-forward, '*' new, '!' rejected, '=' up to date.
  for (const line of r.stdout.split('\n')) {
    const m = /^([ *+!=-])\t([^:]+):(\S+)\t/.exec(line);
    if (!m) continue;
    if (m[1] === '!') rejected.push(m[3]!);
    else if (m[1] === ' ' || m[1] === '*' || m[1] === '+') pushed.push(m[3]!);
  }
  if (r.code !== 0 && rejected.length === 0) throw new TrellisError('REMOTE_FAILED', `cannot push to ${remote}: ${firstLine(r.stderr)}`);
  return { pushed, rejected };
}

const firstLine = (s: string) => s.trim().split('\n').filter((l) => !l.startsWith('hint:'))[0] ?? 'git failed';

async function eachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}
