/**
 * Values kept until the current event-loop turn ends, by key. Module-level on purpose: a key names a fact
 * of the machine at this moment (a file's stat, a pid's liveness), the same for every caller in the
 * process, and the table empties every turn, so there is nothing for an owner to hold.
 */
const turn = new Map<string, unknown>();
let clearing = false;

/**
 * `compute()` once per event-loop turn for `key`: the requests parsed together in one turn share one
 * stat or liveness syscall, and the next turn asks again, so nothing is trusted past the moment a
 * change could have been seen anyway.
 */
export function perTurn<T>(key: string, compute: () => T): T {
  if (turn.has(key)) return turn.get(key) as T;
  const value = compute();
  turn.set(key, value);
  if (!clearing) {
    clearing = true;
    setImmediate(() => {
      turn.clear();
      clearing = false;
    });
  }
  return value;
}
