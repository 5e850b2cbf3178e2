import { createHash } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import mittModule, { type Emitter } from 'mitt';
import type { Board } from '../../projections/index.js';
import { TrellisError } from '../../events/index.js';
import { buildBoard, type BoardSources } from './board.js';
import { requireRoot } from '../project/repository.js';
import { freshnessFrom } from '../issues/merged-list.js';
import type { ThreadsRead } from '../issues/thread-store.js';
import type { SessionsProject } from '../sessions/log/sessions-project.js';
import { readSpecTree, type SpecFileMemo, type SpecTree } from '../spec/spec-tree.js';
import { OverlayMemo } from '../spec/overlay-memo.js';
import { TreeWatcher } from '../spec/watch-tree.js';
import { parseStreamRef } from '../streams/stream-names.js';
import { branchOf, noteMoved, STREAM_CHANGES, type ChangeCause, type Moved, type MovedIds } from './moved-ids.js';

export type { ChangeCause, MovedIds, MovedKind } from './moved-ids.js';


export interface BoardChange {
  readonly cause: ChangeCause;
  readonly freshness: Board['freshness'];
  readonly moved: MovedIds;
  /** The event's JSON, serialized once for every subscriber. */
  readonly json: string;
}

type Events = { change: BoardChange };

// mitt ships CommonJS typings whose default export NodeNext reads as the module object.
const mitt = mittModule as unknown as <E extends Record<string, unknown>>() => Emitter<E>;

export interface BoardSnapshot {
  readonly board: Board;
  readonly bytes: string;
  readonly etag: string;
}

/** Debounce for bursts: one git write touches a lock and a ref within a millisecond or two. */
const SETTLE_MS = 5;
/** A safety net for the watchers: re-derive everything this often even if no event arrived (a test may set it). */
const resyncMs = () => (Number(process.env.TRELLIS_RESYNC_MS) > 0 ? Number(process.env.TRELLIS_RESYNC_MS) : 10_000);
/**
 * A request can arrive in the same turn of the event loop as the watcher event of a ref another
 * process moved just before sending it. The kernel queued that event before the request was sent, so it
 * is delivered in the same poll phase; yielding to the check phase lets it land first. One tick, no
 * I/O: the board is never stale with respect to a write that finished before the request.
 */
const watchersCaughtUp = () => new Promise<void>((resolve) => setImmediate(resolve));
/** How often the server re-lists its forges (conditional requests: an unchanged forge costs 304s). */
const FORGE_REFRESH_MS = Number(process.env.TRELLIS_FORGE_REFRESH_MS) > 0 ? Number(process.env.TRELLIS_FORGE_REFRESH_MS) : 30_000;
/** The server writes the projection cache at most this often. */
const CACHE_SAVE_MS = 2_000;

/**
 * The server's view of a project: the board memoized per generation of its inputs, and a bus that says
 * when the board's bytes changed. File system watchers on the issue refs, `packed-refs`, the spec root and
 * the config files bump the generation; any process's write is seen (a CLI in another process, `git
 * fetch`, an editor). Each request still re-derives the board from the current generation: nothing is
 * served on a timer.
 */
export class LiveProject {
  readonly bus = mitt<Events>();
  private generation = 0;
  private memo: { generation: number; snapshot: BoardSnapshot } | undefined;
  private spec: { generation: number; tree: SpecTree } | undefined;
  /** Bumped only by changes that can move the spec tree, so an issue write never re-reads it. */
  private specGeneration = 0;
  private readonly specFiles: SpecFileMemo = new Map();
  private readonly watchers: FSWatcher[] = [];
  private readonly trees: TreeWatcher[] = [];
  private pending: { causes: Set<ChangeCause>; moved: Moved; timer: NodeJS.Timeout } | undefined;
  private resync: NodeJS.Timeout | undefined;
  private lastEtag: string | undefined;
  private lastStamp: string | undefined;
  /** A build in flight, shared only with requests of the same generation. */
  private building: { generation: number; promise: Promise<BoardSnapshot> } | undefined;
  /** Whether anyone reads the change stream (the SSE's pages); set by the stream's route. */
  listening: () => boolean = () => true;
  /** The generation every change up to which was announced by a change of streams (its board unbuilt then). */
  private announced = -1;
  /** Diagnostics: how many rebuilds ran and how long the last one took. */
  readonly stats = { rebuilds: 0, lastRebuildMs: 0 };
  /** Thread ids whose refs changed since the last build; null: something else did, read every tip. */
  private dirtyThreads: Set<string> | null = null;

  private forgeTimer: NodeJS.Timeout | undefined;
  /** The worktree overlay, memoized on what it summarizes (public for its diagnostics). */
  readonly overlay: OverlayMemo;

  constructor(readonly project: SessionsProject) {
    this.overlay = new OverlayMemo(project.root ?? project.gitdir, project.gitdir, (branch) => this.changed('worktrees', branch));
    project.threads.deferCacheSaves(CACHE_SAVE_MS);
    project.evals.deferCacheSaves(CACHE_SAVE_MS);
    project.sessionLog.deferCacheSaves(CACHE_SAVE_MS);
    // The server's reads use the resident forge slice; a background refresh keeps it current.
    project.forgeReads = 'resident';
    project.forges.onChange(() => this.changed('forge'));
  }

  /** Starts watching. Safe to skip in tests that only read. */
  start(): this {
    const { gitdir } = this.project;
    const root = requireRoot(this.project);
    this.trees.push(
      new TreeWatcher(join(gitdir, 'refs'), (name) => {
        // A thread's ref (or its lock) names the one thread to re-read; anything else re-reads all tips.
        const rel = name.split('\\').join('/');
        // A branch moved: a worktree's HEAD or trunk, which the overlay summarizes.
        if (rel.startsWith('heads/')) return this.changed('worktrees', branchOf(rel));
        const stream = parseStreamRef(rel);
        // A session transition moves the board's sessions, a reading its per-node outcomes; never a thread.
        // Their lock files are not announced: the ref's own name is seen when the write lands (announcing
        // the lock too made a page read a session twice per event, the first time before the write).
        if (stream?.cause === 'sessions' || stream?.cause === 'evals') return stream.lock ? undefined : this.changed(stream.cause, stream.id);
        // A WIP snapshot is no reader's input.
        if (stream && !stream.cause) return;
        if (stream?.kind === 'issues' && stream.id && this.dirtyThreads) this.dirtyThreads.add(stream.id);
        else this.dirtyThreads = null;
        this.changed('issues', stream?.kind === 'issues' ? stream.id : undefined);
      }),
    );
    // A linked worktree added, removed or switched (its HEAD); index writes and locks are not the overlay's.
    const worktrees = new TreeWatcher(join(gitdir, 'worktrees'), (name) => {
      const rel = name.split('\\').join('/');
      if (!rel.includes('/') || rel.endsWith('/HEAD')) this.changed('worktrees');
    }, { depth: 1 });
    this.trees.push(worktrees);
    this.watch(gitdir, (name) => {
      if (name === 'worktrees') worktrees.rescan();
      return name === 'packed-refs' ? 'issues' : name === 'worktrees' || name === 'HEAD' ? 'worktrees' : null;
    });
    this.watch(root, (name) =>
      name === 'trellis.json' || name === 'trellis.local.json' ? 'config' : name === this.project.settings().specRoot ? 'specs' : null,
    );
    this.watchSpecRoot();
    this.resync = setInterval(() => this.changed('resync'), resyncMs()).unref();
    const refreshForges = () =>
      // An unreadable issue is said when the listing changes, not on every poll that finds it unchanged.
      void this.project.forges.refresh().then(({ failures, notes, changed }) => [...failures, ...(changed ? notes : [])].forEach((f) => console.error(`trellis: forge refresh: ${f}`)));
    refreshForges();
    this.forgeTimer = setInterval(refreshForges, FORGE_REFRESH_MS).unref();
    void this.snapshot().then((s) => {
      this.lastEtag = s.etag;
      this.lastStamp = JSON.stringify(s.board.freshness);
    });
    return this;
  }

  /** Stops watching and writes a deferred projection-cache save. */
  async stop(): Promise<void> {
    for (const w of this.watchers.splice(0)) w.close();
    for (const t of this.trees.splice(0)) t.close();
    this.specWatcher?.close();
    this.overlay.close();
    if (this.pending) clearTimeout(this.pending.timer);
    if (this.resync) clearInterval(this.resync);
    if (this.forgeTimer) clearInterval(this.forgeTimer);
    try {
      await this.project.threads.flushCache();
      await this.project.evals.flushCache();
      await this.project.sessionLog.flushCache();
    } catch (err) {
      // The cache is only an optimization; a repository removed under a stopping server is not an error.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') console.error(`trellis: cannot write the projection cache: ${(err as Error).message}`);
    }
  }

  /** The board as of now, with its bytes and ETag; rebuilt only when an input changed. */
  async snapshot(): Promise<BoardSnapshot> {
    await watchersCaughtUp();
    if (this.memo?.generation === this.generation) return this.memo.snapshot;
    if (this.building?.generation === this.generation) return this.building.promise;
    const generation = this.generation;
    const started = performance.now();
    const build = buildBoard(this.project, this.sources(), () => this.readThreads()).then(({ board, bytes }) => {
      const snapshot = { board, bytes, etag: `"${createHash('sha1').update(bytes).digest('base64url')}"` };
      this.stats.rebuilds++;
      this.stats.lastRebuildMs = performance.now() - started;
      this.memo = { generation, snapshot };
      // The board a change of streams announced, built by whoever asked first (a page's GET, most often).
      if (generation === this.announced) this.lastEtag = snapshot.etag;
      return snapshot;
    });
    this.building = { generation, promise: build };
    try {
      return await build;
    } finally {
      if (this.building?.promise === build) this.building = undefined;
    }
  }

  /**
   * Every thread at its current tip, reading only the refs the watchers saw move since the last read
   * (all of them the first time, and after any event that did not name a thread).
   */
  async readThreads(): Promise<ThreadsRead> {
    await watchersCaughtUp();
    const only = this.dirtyThreads;
    this.dirtyThreads = new Set();
    return this.project.threads.all(only ? { only } : {});
  }

  /** Spec tree, memoized until something under the spec root (or the config) changes; unchanged files are not re-parsed. */
  specTree(): SpecTree {
    if (this.spec?.generation !== this.specGeneration) {
      this.spec = { generation: this.specGeneration, tree: readSpecTree(requireRoot(this.project), this.project.settings().specRoot, this.specFiles) };
    }
    return this.spec.tree;
  }

  /**
   * Tells the live view something changed. `id`: the stream that moved, when the cause is a stream kind's
   * and its ref named one (the change event carries it, so a page refetches only what it names).
   */
  changed(cause: ChangeCause, id?: string): void {
    this.generation++;
    if (cause === 'specs' || cause === 'config' || cause === 'resync') this.specGeneration++;
    if (cause !== 'issues' && cause !== 'specs' && cause !== 'evals' && cause !== 'sessions') this.dirtyThreads = null;
    if (cause === 'config' || (cause === 'specs' && !this.specWatcher)) this.rewatchSpecRoot();
    if (this.pending) {
      this.pending.causes.add(cause);
      noteMoved(this.pending.moved, cause, id);
      return;
    }
    const causes = new Set<ChangeCause>([cause]);
    const moved: Moved = new Map();
    noteMoved(moved, cause, id);
    this.pending = { causes, moved, timer: setTimeout(() => void this.settle(causes, moved), SETTLE_MS) };
  }

  private sources(): BoardSources {
    return { specTree: () => this.specTree(), overlay: (specRoot, trunk) => this.overlay.overlay(specRoot, trunk) };
  }

  /**
   * Says a change to subscribers. A change of streams only (threads, the forge, sessions, readings) is
   * announced at once, naming what moved, and the board is rebuilt by whoever asks for it next: a thread or
   * forge change when it moved the freshness stamp (spec §2.1 rule 8, cheap to recompute), a session's
   * event or a reading always (a page showing that session reads it again, whether or not the board's
   * bytes moved). Anything else (specs, config, worktrees, a resync) is announced only if the rebuilt
   * board's bytes differ from the last announced board's, or a branch moved.
   *
   * Announcing a session event only when the board's bytes moved lost it when another change's rebuild
   * had already read its ref: that change's event did not name the session, and the session's own rebuild
   * then compared equal (a session page stayed on `review` after a CLI close).
   */
  private async settle(causes: Set<ChangeCause>, moved: Moved): Promise<void> {
    this.pending = undefined;
    // Every change up to here is settled into this one; a later one has its own pending settle.
    const settled = this.generation;
    const cause = [...causes].find((c) => c !== 'resync') ?? 'resync';
    try {
      if ([...causes].every((c) => STREAM_CHANGES.has(c))) {
        const freshness = freshnessFrom(this.project, await this.readThreads());
        const stamp = JSON.stringify(freshness);
        if (stamp === this.lastStamp && ![...causes].some((c) => c === 'sessions' || c === 'evals')) return;
        this.lastStamp = stamp;
        this.emit(cause, freshness, causes, moved);
        this.noteAnnounced(settled);
        return;
      }
      const snap = await this.snapshot();
      const stamp = JSON.stringify(snap.board.freshness);
      // A reading or a moved branch is news even when the board's bytes stay: a session's review and the
      // scoreboard show them (a session's reading, trunk's tip), the board does not.
      if (snap.etag === this.lastEtag && !causes.has('evals') && !causes.has('worktrees')) return;
      this.lastEtag = snap.etag;
      this.lastStamp = stamp;
      this.emit(cause, snap.board.freshness, causes, moved);
    } catch (err) {
      if (isConfigError(err) && this.lastStamp !== undefined) {
        // Subscribers refetch and meet the error (a 500 naming the file, line and repair); the board that
        // follows the repair is announced, whatever its bytes, since nobody holds the one before.
        this.lastEtag = undefined;
        this.emit('config', JSON.parse(this.lastStamp) as Board['freshness']);
        return;
      }
      console.error(`trellis: reading the change failed: ${(err as Error).message}`);
    }
  }

  /**
   * After a change of streams announced without a rebuild, the board it moved becomes the one compared
   * against, as soon as it is built (snapshot()): otherwise the next resync compared against the board before
   * the write and announced again what had been announced (a 'resync' that made every open page read
   * everything, ten seconds after a reply). With pages listening it is built now, once they have heard (most
   * ask for it at once and share this build; a page showing only what moved does not); with none, nobody is
   * told twice, and the serve rebuilds nothing per agent event.
   */
  private noteAnnounced(generation: number): void {
    // Only a board of exactly the announced generation: one with a later change in it would hide that
    // change from its own settle (compared equal, never announced); a stale one only announces again.
    if (this.generation !== generation) return;
    this.announced = generation;
    if (this.memo?.generation === generation) this.lastEtag = this.memo.snapshot.etag;
    else if (this.listening()) void this.snapshot().catch(() => {});
  }

  /** `causes`: every change settled into this one (a review refetches on some of them, whichever came first). */
  private emit(cause: ChangeCause, freshness: Board['freshness'], causes: ReadonlySet<ChangeCause> = new Set([cause]), moved: Moved = new Map()): void {
    const named: MovedIds = {};
    for (const [kind, ids] of moved) if (ids) named[kind] = [...ids];
    this.bus.emit('change', { cause, freshness, moved: named, json: JSON.stringify({ cause, causes: [...causes], freshness, moved: named }) });
  }

  private watch(path: string, classify: (name: string) => ChangeCause | null): FSWatcher | undefined {
    try {
      const w = watch(path, { persistent: false }, (_event, name) => {
        const cause = classify(String(name ?? ''));
        if (cause) this.changed(cause);
      });
      w.on('error', () => this.changed('resync'));
      this.watchers.push(w);
      return w;
    } catch {
      // The path does not exist (yet): the parent's watcher reports its creation.
      return undefined;
    }
  }

  private specWatcher: TreeWatcher | undefined;

  private watchSpecRoot(): void {
    const w = new TreeWatcher(join(requireRoot(this.project), this.project.settings().specRoot), () => this.changed('specs'));
    this.specWatcher = w.watching ? w : (w.close(), undefined);
  }

  private rewatchSpecRoot(): void {
    this.specWatcher?.close();
    this.specWatcher = undefined;
    try {
      this.watchSpecRoot();
    } catch (err) {
      // A malformed trellis.json names no spec root: watch again once the config changes (settle says why).
      if (!isConfigError(err)) throw err;
    }
  }
}

const isConfigError = (err: unknown): boolean => err instanceof TrellisError && err.code === 'CONFIG_INVALID';
