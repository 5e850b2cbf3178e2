import { KeyedQueue } from '../keyed-queue.js';

/**
 * Read-modify-writes of one file run one at a time within this process, queued by the file's path:
 * hub.json's writers (hosts, quiet hours, the host's icon), the project catalog, a project's
 * trellis.json through the config seam. A check made inside the queue (a revision still current, a
 * name not taken) still holds when the write lands, and no writer's patch is overwritten by another's
 * read from before it.
 *
 * A module-level table on purpose, the one such table here: a file has one queue however many owners
 * write it (two gateways on one home in a test process, a CLI verb beside a route), so no object
 * narrower than the process is a sane owner. Across processes nothing here holds: each write is atomic
 * (a rename) and the revision-checked ones re-read before writing.
 */
const queues = new KeyedQueue();

/** Runs `fn` once every earlier write queued on `path` has settled; its result or failure is the caller's. */
export function serially<T>(path: string, fn: () => Promise<T>): Promise<T> {
  return queues.run(path, fn);
}
