import { InputLanes } from './input-queue.js';

/**
 * What this process holds for one opened project's sessions, made once with the project (`Project`'s
 * `sessionWork`) rather than in module globals, so two projects opened in one process never wait on each
 * other and every function that relies on it says so by taking it.
 */
export class SessionWork {
  /** Input to each of the project's sessions, in arrival order. */
  readonly input = new InputLanes();
  private passing: Promise<unknown> = Promise.resolve();

  /**
   * Runs `pass` after every earlier queue pass of this project in this process has settled: two passes
   * at once would both count the same free slots and launch past the budget.
   */
  queuePass<T>(pass: () => Promise<T>): Promise<T> {
    const run = this.passing.catch(() => {}).then(pass);
    this.passing = run;
    return run;
  }
}
