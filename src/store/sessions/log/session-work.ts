import { KeyedQueue } from '../../keyed-queue.js';
import { InputLanes } from '../tmux/input-queue.js';

/**
 * What this process holds for one opened project's sessions, made once with the project (`Project`'s
 * `sessionWork`) rather than in module globals, so two projects opened in one process never wait on each
 * other and every function that relies on it says so by taking it.
 */
export class SessionWork {
  /** Input to each of the project's sessions, in arrival order. */
  readonly input = new InputLanes();
  private readonly passes = new KeyedQueue();

  /**
   * Runs `pass` after every earlier queue pass of this project in this process has settled: two passes
   * at once would both count the same free slots and launch past the budget.
   */
  queuePass<T>(pass: () => Promise<T>): Promise<T> {
    return this.passes.run('queue', pass);
  }
}
