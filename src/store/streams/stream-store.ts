import { TrellisError } from '../../events/errors.js';
import type { GitAppendLog } from '../git/append-log.js';
import { readTip, tipsUnchanged, type TipsRead, type TipsStamp } from '../git/refs.js';
import { CacheSaves } from './cache-saves.js';
import { foldChain } from './fold-chain.js';
import type { ProjectionCache, StreamProblem, StreamSnapshot } from './projection-cache.js';
import type { StoredEvent, StreamKind } from './stream-kind.js';
import { exportEvents, importEvents } from './stream-transfer.js';
import { batchDecider, type BatchOptions, type Skipped } from './batch-decide.js';
import { someTips, type DecidedStep, type StreamsRead } from './stream-reads.js';

/**
 * How often a writer re-reads, re-decides and retries after losing a compare-and-swap before it takes the
 * ref's lock for the whole append instead (contention is rare; a lost race costs one re-fold).
 */
const OPTIMISTIC_ATTEMPTS = 3;

export type { DecidedStep, StreamsDelta, StreamsRead } from './stream-reads.js';

/**
 * The one store for every kind of event stream (issue threads, sessions, eval readings) over a git
 * append log: folds refs into states (incrementally, from the last tip this process or the projection
 * cache has seen) and appends decided events with compare-and-swap. The kind says what the events mean.
 */
export class StreamStore<E extends StoredEvent, S, C> {
  private readonly known = new Map<string, StreamSnapshot<S>>();
  private cacheLoaded = false;
  /** The last answer of all(), reused while no tip has moved so warm reads build nothing. */
  private lastRead: StreamsRead<S> | undefined;
  /** Whether all() has read every tip at least once (a precondition for reading only some). */
  private fullyRead = false;
  /** What the last full read of the tips saw of the ref folders (see TipsStamp), and the tips it read. */
  private stamp: TipsStamp | undefined;
  private layers: TipsRead | undefined;
  /** The last read built, and the streams whose snapshot changed since (its successor's delta). */
  private builtRead: StreamsRead<S> | undefined;
  private readonly moved = new Set<string>();

  /** When and what of `known` reaches the projection cache. */
  private readonly saves: CacheSaves<S>;

  constructor(
    readonly kind: StreamKind<E, S, C>,
    protected readonly log: GitAppendLog,
    private readonly cache: ProjectionCache<S>,
  ) {
    this.saves = new CacheSaves(cache, this.known, () => this.fullyRead && this.cacheLoaded);
  }

  /** The ref of stream `id`. */
  ref(id: string): string {
    return `${this.kind.refPrefix}${id}`;
  }

  /**
   * A long-running reader (the server) saves the projection cache at most every `delayMs` instead of
   * after every change, so a burst of writes appends once.
   */
  deferCacheSaves(delayMs: number): void {
    this.saves.defer(delayMs);
  }

  /** Writes a deferred cache save now (on shutdown). */
  flushCache(): Promise<void> {
    return this.saves.flush();
  }

  /**
   * Every stream at its current tip. Corrupt streams are reported by name; the others still list.
   * `only`: the caller knows (from file system events) that no stream outside these ids moved since the
   * last call, so only their refs are read; the first call always reads every tip. `ifMoved`: when the
   * ref folders and packed-refs are as the last full read left them (see TipsStamp), no tip is read and
   * the last answer stands (a warm in-process list; a ref file rewritten in place, which neither git nor
   * Trellis does, is seen only once its folder changes).
   */
  all(opts: { only?: ReadonlySet<string>; ifMoved?: boolean } = {}): Promise<StreamsRead<S>> {
    // One read at a time: two interleaved reads could each fold a different tip of the same stream and
    // the older one could land last.
    const run = this.reading.then(() => this.readAll(opts));
    this.reading = run.catch(() => {});
    return run;
  }

  private reading: Promise<unknown> = Promise.resolve();
  /** Streams whose last read failed for a reason that may pass; they are read again next time. */
  private readonly transient = new Set<string>();

  private async readAll(opts: { only?: ReadonlySet<string>; ifMoved?: boolean }): Promise<StreamsRead<S>> {
    const partial = this.fullyRead && opts.only !== undefined;
    if (!partial && opts.ifMoved && this.lastRead && this.transient.size === 0 && this.stamp && tipsUnchanged(this.stamp)) return this.lastRead;
    if (!this.cacheLoaded) {
      for (const [id, snap] of this.cache.load()) if (!this.known.has(id)) this.known.set(id, snap);
      this.cacheLoaded = true;
    }
    // The ids whose tips may differ from what `known` holds, and their tips now (undefined: gone).
    let candidates: Iterable<string>;
    let tipOf: (id: string) => string | undefined;
    // Streams whose ref is damaged (a power cut's zero-length ref): skipped by this read, but their
    // cached tip is kept, so `trellis doctor --repair` can restore the ref from it.
    let damaged: ReadonlySet<string>;
    if (partial) {
      const { tips, damaged: bad } = someTips(this.log, (id) => this.ref(id), opts.only!);
      candidates = [...new Set([...opts.only!, ...tips.keys()])];
      tipOf = (id) => tips.get(id);
      damaged = bad;
    } else {
      const read = this.log.tipsStamped(this.kind.refPrefix);
      damaged = new Set(read.damaged);
      const before = this.layers;
      this.stamp = read.stamp;
      this.layers = read;
      if (before && before.packed === read.packed) {
        // packed-refs is as the last full read parsed it, and every tip then was folded or written since
        // (a write leaves a loose ref): only loose refs, then or now, can differ. At 50,000 packed
        // threads this is a few lookups instead of a pass over every thread (and its garbage).
        candidates = new Set([...before.loose.keys(), ...read.loose.keys(), ...this.transient]);
        tipOf = (id) => read.get(id);
      } else {
        const tips = read.tips();
        candidates = [...new Set([...this.known.keys(), ...tips.keys()])];
        tipOf = (id) => tips.get(id);
      }
    }
    this.fullyRead = true;
    let changed = false;
    const stale: { id: string; tip: string }[] = [];
    for (const id of candidates) {
      const tip = tipOf(id);
      if (tip === undefined) {
        if (this.known.delete(id)) {
          if (!damaged.has(id)) this.saves.unsaved.add(id);
          this.moved.add(id);
          changed = true;
        }
      } else if (this.known.get(id)?.tip !== tip || this.transient.has(id)) stale.push({ id, tip });
    }
    if (stale.length) {
      await this.refresh(stale);
      changed = true;
    }
    if (changed) {
      this.lastRead = undefined;
      await this.saves.save();
    }
    if (this.lastRead) return this.lastRead;
    const states: S[] = [];
    const problems: StreamProblem[] = [];
    for (const snap of this.known.values()) {
      if ('state' in snap) states.push(snap.state);
      else problems.push(snap.problem);
    }
    const read: StreamsRead<S> = { states, problems };
    const from = this.builtRead;
    if (from) {
      const changed = new Map<string, S | null>();
      for (const id of this.moved) {
        const snap = this.known.get(id);
        changed.set(id, snap && 'state' in snap ? snap.state : null);
      }
      from.delta = undefined;
      read.delta = { from, changed };
    }
    this.moved.clear();
    this.builtRead = this.lastRead = read;
    return read;
  }

  /** The tip the projection cache on disk holds for stream `id` (doctor's repair of a damaged ref). */
  cachedTip(id: string): string | undefined {
    return this.cache.load().get(id)?.tip;
  }

  /** One stream at its current tip, without reading the others (the kind's initial state if absent). */
  async get(id: string): Promise<S> {
    // A damaged ref is named as damage with its repair, never read as "no such stream": every verb that
    // reads one first (show, reply, close, a session's prompt) says what is wrong and how to mend it.
    const found = this.log.tipOrDamage(this.ref(id));
    if (found === 'damaged') readTip(this.log.gitdir, this.ref(id));
    const tip = found === 'damaged' ? null : found;
    this.fromCache(id, tip);
    const snap = await this.snapshotAt(id, tip);
    return this.stateOrThrow(snap, id);
  }

  /**
   * Decides `command` against the stream's current state and appends the events. When another writer
   * moved the ref meanwhile, re-reads, re-decides (the command may now be refused) and retries; a writer
   * that lost OPTIMISTIC_ATTEMPTS races in a row takes the ref's lock for its whole read-decide-append, so
   * a slow process among fast ones is never starved (it once lost 100 races in a row on a loaded machine).
   */
  write(id: string, command: C): Promise<{ state: S; events: E[] }> {
    return this.append(id, (tip) => this.decideAt(id, tip, command));
  }

  /**
   * Decides `commands` in order, each at the state the ones before it left, and appends all their events
   * in one append (one compare-and-swap, one cache save, retried as write() is): a hook's usage reading and
   * its own transition cost one write, not two (issue 42). `prepare` makes the command to decide at that
   * state (null: none), so one that depends on the state is made again when a lost race re-decides; one the
   * kind refuses is left out when `skip(error)` says so (listed in `skipped`), else the append fails.
   */
  async writeAll(id: string, commands: readonly C[], opts: BatchOptions<S, C> = {}): Promise<{ state: S; events: E[]; skipped: Skipped<C>[] }> {
    const batch = batchDecider(this.kind, opts);
    const written = await this.append(id, (tip) => {
      batch.skipped.length = 0;
      return this.decideEach(id, tip, commands, batch.decideOne);
    });
    return { ...written, skipped: batch.skipped };
  }

  /** Appends what `decide(tip)` decides at the ref's tip, retried as write() says. */
  private async append(id: string, decide: (tip: string | null) => Promise<DecidedStep<S, E>>): Promise<{ state: S; events: E[] }> {
    const ref = this.ref(id);
    for (let attempt = 0; attempt < OPTIMISTIC_ATTEMPTS; attempt++) {
      const tip = this.log.tip(ref);
      if (attempt === 0) this.fromCache(id, tip);
      const step = await decide(tip);
      if (step.next === null) return { state: step.state, events: step.events };
      if (await this.log.swap(ref, tip, step.next)) return this.appended(id, step);
    }
    let step: DecidedStep<S, E> | undefined;
    await this.log.swapUnderLock(ref, async (tip) => {
      step = await decide(tip);
      return step.next;
    });
    if (!step) throw new TrellisError('APPEND_CONFLICT', `${ref} could not be read under its lock; try again`);
    if (step.next === null) return { state: step.state, events: step.events };
    return this.appended(id, step);
  }

  /** The state at `tip`, the events `command` decides there, and the commit that appends them (null: none). */
  protected decideAt(id: string, tip: string | null, command: C): Promise<DecidedStep<S, E>> {
    return this.decideEach(id, tip, [command], (state, c) => this.kind.decide(state, c));
  }

  /** decideAt for several commands, each decided by `decideOne` at the state the events before it left. */
  private async decideEach(id: string, tip: string | null, commands: readonly C[], decideOne: (state: S, command: C) => E[] | Promise<E[]>): Promise<DecidedStep<S, E>> {
    const state = this.stateOrThrow(await this.snapshotAt(id, tip), id);
    const events: E[] = [];
    let at = state;
    for (const command of commands) {
      const decided = await decideOne(at, command);
      for (const e of decided) at = this.kind.evolve(at, e);
      events.push(...decided);
    }
    if (events.length === 0) return { state, events, next: null };
    const next = this.log.commit(
      tip,
      events.map((e) => ({ bytes: Buffer.from(JSON.stringify(e)), subject: this.kind.describe(e, state), author: e.by, at: new Date(e.at) })),
    );
    return { state, events, next };
  }

  /** Records an appended step as this process's newest view of the stream, and answers the write. */
  protected async appended(id: string, step: DecidedStep<S, E>): Promise<{ state: S; events: E[] }> {
    const after = step.events.reduce((s, e) => this.kind.evolve(s, e), step.state);
    this.known.set(id, { tip: step.next!, state: after });
    this.saves.unsaved.add(id);
    this.moved.add(id);
    this.lastRead = undefined;
    await this.saves.save();
    return { state: after, events: step.events };
  }

  /**
   * A process that has not loaded the cache (a CLI verb on one stream) takes the stream's fold from the
   * cache's journal when it is at exactly `tip`: no git process, no chain read.
   */
  private fromCache(id: string, tip: string | null): void {
    if (tip === null || this.cacheLoaded || this.known.get(id)?.tip === tip) return;
    const cached = this.cache.lookup(id);
    if (cached?.tip === tip) {
      this.known.set(id, cached);
      this.moved.add(id);
    }
  }

  protected async snapshotAt(id: string, tip: string | null): Promise<StreamSnapshot<S> | null> {
    if (tip === null) {
      if (this.known.delete(id)) {
        this.lastRead = undefined;
        this.moved.add(id);
      }
      return null;
    }
    const have = this.known.get(id);
    if (have?.tip === tip) return have;
    await this.refresh([{ id, tip }]);
    return this.known.get(id) ?? null;
  }

  private async refresh(stale: readonly { id: string; tip: string }[]): Promise<void> {
    const bases = stale.map(({ id }) => {
      const snap = this.known.get(id);
      return snap && 'state' in snap ? snap : undefined;
    });
    // Each chain is folded the moment it is read, so its events' bytes never pile up (a cold read of
    // 50,000 threads held every event at once before).
    const again: { id: string; tip: string }[] = [];
    await this.log.readEach(
      stale.map(({ tip }, i) => ({ tip, stopAt: bases[i]?.tip ?? null })),
      (i, result) => {
        const { id, tip } = stale[i]!;
        const snap = foldChain(this.kind, id, this.ref(id), tip, bases[i], result);
        if (snap === 'from-root') {
          again.push(stale[i]!);
          return;
        }
        this.known.set(id, snap);
        this.saves.unsaved.add(id);
        this.moved.add(id);
        // A commit that could not be read may be there next time (a repack, a fetch in progress): only a
        // payload that does not parse is remembered as a problem of that tip.
        if ('problem' in snap && !result.ok) this.transient.add(id);
        else this.transient.delete(id);
      },
    );
    // Streams whose new events do not all sort after what was folded are read and folded from the root.
    if (again.length) {
      for (const { id } of again) this.known.delete(id);
      await this.refresh(again);
    }
    this.lastRead = undefined;
  }

  /**
   * Every stream's events as stored, each stream's in fold order (an NDJSON export); see exportEvents.
   */
  events(keep: (state: S) => boolean = () => true): Promise<{ id: string; event: E; text: string }[]> {
    return exportEvents(this.log, this.kind, keep);
  }

  /** Appends recorded events (an NDJSON import) to their streams, each event once; see importEvents. */
  async importEvents(streams: ReadonlyMap<string, readonly E[]>): Promise<{ streams: number; events: number }> {
    try {
      return await importEvents(this.log, this.kind, streams);
    } finally {
      this.lastRead = undefined;
    }
  }

  protected stateOrThrow(snap: StreamSnapshot<S> | null, id: string): S {
    if (snap === null) return this.kind.initial(id);
    if ('problem' in snap) {
      const p = snap.problem;
      throw new TrellisError('CORRUPT_EVENT', `${this.kind.noun} ${id} cannot be read: ${p.ref} at ${p.commit}: ${p.reason}; inspect it with 'git log ${p.ref}'`);
    }
    return snap.state;
  }
}
