/**
 * Input to one session is serialized (DESIGN §9): a prompt's paste, its Enter, raw keys and typed
 * keystrokes from every viewer take turns, in the order they arrived, so two writers never interleave.
 * One InputLanes per opened project (its SessionWork): the order holds among this process's writers to
 * the project's sessions; across processes the tmux lane lock in pane-input.ts holds it.
 */
export class InputLanes {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Runs `task` after every earlier task for `key` has settled; resolves or rejects with its result. */
  serialize<T>(key: string, task: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    const run = prev.then(task, task);
    const tail = run.catch(() => {});
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return run;
  }
}
