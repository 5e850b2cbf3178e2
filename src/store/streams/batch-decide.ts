import type { StoredEvent, StreamKind } from './stream-kind.js';

/** How StreamStore.writeAll decides each of its commands (see there). */
export interface BatchOptions<S, C> {
  /** The command to decide at this state (null: none); made again when a lost race re-decides. */
  readonly prepare?: (state: S, command: C) => C | null | Promise<C | null>;
  /** Whether a command the kind refuses with `error` is left out (true) or fails the whole append. */
  readonly skip?: (error: unknown) => boolean;
}

export interface Skipped<C> {
  readonly command: C;
  readonly error: unknown;
}

/** Decides one command of a batch at a state, as `opts` says; what it left out is in `skipped`. */
export function batchDecider<E extends StoredEvent, S, C>(kind: StreamKind<E, S, C>, opts: BatchOptions<S, C>) {
  const skipped: Skipped<C>[] = [];
  const decideOne = async (state: S, command: C): Promise<E[]> => {
    const made = opts.prepare ? await opts.prepare(state, command) : command;
    if (made === null) return [];
    try {
      return kind.decide(state, made);
    } catch (error) {
      if (!opts.skip?.(error)) throw error;
      skipped.push({ command: made, error });
      return [];
    }
  };
  return { skipped, decideOne };
}
