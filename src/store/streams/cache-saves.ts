import type { ProjectionCache, StreamSnapshot } from './projection-cache.js';

/**
 * When and what a StreamStore saves of its folds to the projection cache: after every change, or at most
 * every `delayMs` for a long-running reader; only the streams that changed, unless the whole cache wants
 * rewriting. Kept apart from the store because no read or write may fail for it (see save).
 */
export class CacheSaves<S> {
  private deferred: { delayMs: number; timer?: NodeJS.Timeout } | undefined;
  /** Streams whose snapshot changed since the cache last saved them: a save appends only these. */
  readonly unsaved = new Set<string>();
  private warned = false;

  /**
   * `known`: the store's folds, read at save time. `readEveryTip`: whether this process has loaded the
   * cache and read every tip, so its folds are the whole set (only then may it rewrite the cache).
   */
  constructor(
    private readonly cache: ProjectionCache<S>,
    private readonly known: ReadonlyMap<string, StreamSnapshot<S>>,
    private readonly readEveryTip: () => boolean,
  ) {}

  /**
   * A long-running reader (the server) saves the projection cache at most every `delayMs` instead of
   * after every change, so a burst of writes appends once.
   */
  defer(delayMs: number): void {
    this.deferred = { delayMs };
  }

  /** Writes a deferred cache save now (on shutdown). */
  async flush(): Promise<void> {
    if (this.deferred?.timer) {
      clearTimeout(this.deferred.timer);
      this.deferred.timer = undefined;
      await this.persist();
    }
  }

  /**
   * Saves the cache, and never fails the read or the write that asked: the cache is rebuildable and
   * keyed on tips, so a save that did not happen (a full disk, a read-only repository) is only a slower
   * next read. A read-only verb on a full disk still answers; a write whose ref moved is still acknowledged.
   */
  async save(): Promise<void> {
    if (!this.deferred) return this.persist().catch((err) => this.notSaved(err));
    const deferred = this.deferred;
    deferred.timer ??= setTimeout(() => {
      deferred.timer = undefined;
      this.persist().catch((err) => this.notSaved(err));
    }, deferred.delayMs).unref();
  }

  /** One warning per store (stderr for the CLI, the log for a server), not one per read. */
  private notSaved(err: unknown): void {
    if (this.warned) return;
    this.warned = true;
    console.error(`trellis: cannot write the projection cache (${(err as Error).message}); reading on without it`);
  }

  /**
   * Appends the streams that changed since the last save (O(change)); only a process that has read
   * every tip rewrites the whole cache, when it is absent, of another format, or has too much slack.
   */
  private async persist(): Promise<void> {
    if (this.readEveryTip() && this.cache.wantsRewrite(this.known.size)) {
      this.unsaved.clear();
      return this.cache.rewrite(this.known);
    }
    const changes = new Map<string, StreamSnapshot<S> | null>();
    for (const id of this.unsaved) changes.set(id, this.known.get(id) ?? null);
    this.unsaved.clear();
    return this.cache.append(changes);
  }
}
