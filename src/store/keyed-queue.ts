/**
 * Tasks that must not overlap, queued by a key: each runs once every earlier task of its key has settled,
 * in arrival order, and its result or failure is its caller's (one failing never blocks the next). Only
 * keys with work under way are held. Within one process; what must hold across processes takes a lock.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const run = (this.tails.get(key) ?? Promise.resolve()).then(task);
    const tail = run.catch(() => {});
    this.tails.set(key, tail);
    void tail.then(() => this.tails.get(key) === tail && this.tails.delete(key));
    return run;
  }
}
