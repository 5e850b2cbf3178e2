import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
type WriteFileAtomic = typeof import('write-file-atomic');

/**
 * write-file-atomic, loaded on first write: the package (with signal-exit and worker_threads behind it)
 * costs a process several milliseconds to load, which a verb that writes none of the files it keeps
 * (`trellis issue reply`, a hook's `session signal`) must not pay at start-up (issue 40).
 */
const load = (): WriteFileAtomic => require('write-file-atomic') as WriteFileAtomic;

/** Writes `data` to `path` atomically (a temporary file renamed over it). */
export const writeAtomic = (path: string, data: string, options?: Parameters<WriteFileAtomic>[2]): Promise<void> => load()(path, data, options ?? {});

/** The same, synchronously. */
export const writeAtomicSync = (path: string, data: string, options?: Parameters<WriteFileAtomic['sync']>[2]): void => load().sync(path, data, options);
