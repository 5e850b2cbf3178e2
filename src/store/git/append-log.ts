import { PAYLOAD, type ChainReader, type ChainRequest, type ChainResult } from './chain.js';
import { isoChainReader } from './iso-chain-reader.js';
import type { BulkChain } from './bulk-append.js';
import type { LogRecord } from './log-record.js';
import { Housekeeping } from './housekeeping.js';
import { commitObject, objectId, singleFileTree, writeObject, writeObjects, type LooseObject } from './loose-objects.js';
import { compareAndSwapRef, defaultLockOptions, replaceRefUnderLock, type LockOptions } from './ref-lock.js';
import { readTipOrDamage, readTipSkippingDamage, readTips, readTipsStamped, type TipsRead } from './refs.js';

export type { LogRecord } from './log-record.js';

/**
 * isomorphic-git reads ~1 ms per object; git's rev-list and cat-file cost two spawns (~5 ms) and then
 * ~10 µs per object. So catching up a few chains from a known commit (one or two new events each) goes
 * through isomorphic-git, and everything else, a chain read from its root included, through git.
 */
const FEW_CHAINS = 8;

/**
 * Append-only logs kept as git refs: one commit per record, each commit's tree holding the payload as
 * `event.json`, written as loose objects without touching the index or the working tree. Blind to what
 * the payloads mean.
 */
export class GitAppendLog {
  private readonly small: ChainReader;
  /** Loaded on first use: it forks git, which a write that starts from the cached fold never needs. */
  private bulkReader: Promise<ChainReader> | undefined;
  /** Packs loose objects and refs in the background once git's gc.auto estimate is passed. */
  readonly housekeeping: Housekeeping;

  constructor(
    readonly gitdir: string,
    private readonly lock: LockOptions = defaultLockOptions(),
  ) {
    this.small = isoChainReader(gitdir);
    this.housekeeping = new Housekeeping(gitdir);
  }

  /** Tips of the refs under `prefix`, keyed by their names relative to it. */
  tips(prefix: string): ReadonlyMap<string, string> {
    return readTips(this.gitdir, prefix, { relative: true });
  }

  /** `tips`, in its packed and loose layers, with the stamp that tells whether any of them may have moved since (see TipsStamp). */
  tipsStamped(prefix: string): TipsRead {
    return readTipsStamped(this.gitdir, prefix, { relative: true });
  }

  /** The tip of one ref for a reader: a damaged ref reads as absent, with one warning (writers refuse it under their lock). */
  tip(ref: string): string | null {
    return readTipSkippingDamage(this.gitdir, ref);
  }

  /** `tip`, telling a damaged ref (`'damaged'`) from an absent one (null). */
  tipOrDamage(ref: string): string | null | 'damaged' {
    return readTipOrDamage(this.gitdir, ref);
  }

  async read(requests: readonly ChainRequest[]): Promise<ChainResult[]> {
    return (this.isCatchUp(requests) ? this.small : await this.bulk()).read(requests);
  }

  /** `read`, streamed: each chain's result is handed over as soon as it is read (see ChainReader.readEach). */
  async readEach(requests: readonly ChainRequest[], onResult: (index: number, result: ChainResult) => void): Promise<void> {
    const reader = this.isCatchUp(requests) ? this.small : await this.bulk();
    if (reader.readEach) return reader.readEach(requests, onResult);
    (await reader.read(requests)).forEach((r, i) => onResult(i, r));
  }

  private bulk(): Promise<ChainReader> {
    return (this.bulkReader ??= import('./rev-list-chain-reader.js').then((m) => m.revListChainReader(this.gitdir)));
  }

  private isCatchUp(requests: readonly ChainRequest[]): boolean {
    return requests.length <= FEW_CHAINS && requests.every((r) => r.stopAt !== null);
  }

  /** Writes the commits for `records` on top of `parent` and returns the new tip; no ref moves. */
  commit(parent: string | null, records: readonly LogRecord[]): string {
    // Every object named first, then all written in one batch (their syncs together: see writeObjects).
    let tip = parent;
    const objects: LooseObject[] = [];
    for (const r of records) {
      const blob: LooseObject = { type: 'blob', content: Buffer.from(r.bytes) };
      const tree: LooseObject = { type: 'tree', content: singleFileTree(PAYLOAD, objectId(blob)) };
      const who = { name: r.author, email: '', at: r.at };
      const commit: LooseObject = { type: 'commit', content: commitObject(objectId(tree), tip, who, r.subject.replace(/\s+/g, ' ').trim()) };
      objects.push(blob, tree, commit);
      tip = objectId(commit);
    }
    if (tip === null) throw new Error('commit() needs at least one record');
    writeObjects(this.gitdir, objects);
    return tip;
  }

  /**
   * Writes a merge commit joining two histories of one log (two clones wrote to it): the given parents,
   * the empty tree and no payload, so readers walk both sides and add no event of its own. No ref moves.
   */
  merge(parents: readonly string[], who: { name: string; at: Date }, subject: string): string {
    const tree = writeObject(this.gitdir, 'tree', Buffer.alloc(0));
    return writeObject(this.gitdir, 'commit', commitObject(tree, parents, { name: who.name, email: '', at: who.at }, subject.replace(/\s+/g, ' ').trim()));
  }

  /**
   * Appends to many logs in one go (see bulkAppend): one pack, one all-or-nothing ref transaction, each
   * ref from its expected tip. The tips written, by ref (see bulkAppend).
   */
  async bulkAppend(chains: readonly BulkChain[]): Promise<Map<string, string> | null> {
    const { bulkAppend } = await import('./bulk-append.js');
    const written = await bulkAppend(this.gitdir, chains);
    if (written?.size) this.housekeeping.afterWrite();
    return written;
  }

  /**
   * Moves `ref` to what `build(tip)` returns while holding the ref's lock throughout, so nobody can move
   * it in between (see replaceRefUnderLock); null from `build` leaves it. The new tip, or null.
   */
  async swapUnderLock(ref: string, build: (tip: string | null) => Promise<string | null>): Promise<string | null> {
    const moved = await replaceRefUnderLock(this.gitdir, ref, this.lock, build);
    if (moved !== null) this.housekeeping.afterWrite();
    return moved;
  }

  /** Moves `ref` from `expected` to `next` if nobody moved it meanwhile (see compareAndSwapRef). */
  async swap(ref: string, expected: string | null, next: string): Promise<boolean> {
    const moved = await compareAndSwapRef(this.gitdir, ref, expected, next, this.lock);
    if (moved) this.housekeeping.afterWrite();
    return moved;
  }
}

