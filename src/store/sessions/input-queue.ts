/**
 * Input to one session is serialized (DESIGN §9): a prompt's paste, its Enter, raw keys and typed
 * keystrokes from every viewer take turns, in the order they arrived, so two writers never interleave.
 */
const tails = new Map<string, Promise<unknown>>();

/** Runs `task` after every earlier task for `key` has settled; resolves or rejects with its result. */
export function serialize<T>(key: string, task: () => Promise<T>): Promise<T> {
  const prev = tails.get(key) ?? Promise.resolve();
  const run = prev.then(task, task);
  const tail = run.catch(() => {});
  tails.set(key, tail);
  void tail.then(() => {
    if (tails.get(key) === tail) tails.delete(key);
  });
  return run;
}
