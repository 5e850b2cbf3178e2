import { KeyedQueue } from '../../keyed-queue.js';

/**
 * Input to one session is serialized (DESIGN §9): a prompt's paste, its Enter, raw keys and typed
 * keystrokes from every viewer take turns, in the order they arrived, so two writers never interleave.
 * One InputLanes per opened project (its SessionWork): the order holds among this process's writers to
 * the project's sessions; across processes the tmux lane lock in pane-input.ts holds it.
 */
export class InputLanes {
  private readonly lanes = new KeyedQueue();

  /** Runs `task` after every earlier task for `key` has settled; resolves or rejects with its result. */
  serialize<T>(key: string, task: () => Promise<T>): Promise<T> {
    return this.lanes.run(key, task);
  }
}
