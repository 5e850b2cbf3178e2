/** What the stream store's reads and decisions answer, and its read of some tips (stream-store.ts). */
import type { GitAppendLog } from '../git/append-log.js';
import type { StreamProblem } from './projection-cache.js';

/** One decision at a tip: the state there, the events decided, and the commit appending them. */
export interface DecidedStep<S, E> {
  readonly state: S;
  readonly events: E[];
  readonly next: string | null;
}

/** Every stream of a kind at its current tip: the folded ones, and the ones that cannot be folded. */
export interface StreamsRead<S> {
  readonly states: readonly S[];
  readonly problems: readonly StreamProblem[];
  /**
   * What changed since the read before this one (`from`), by stream id: the new state, or null for a
   * stream that is gone or cannot be folded now. Lets a view of every stream follow in O(change); only
   * the newest read keeps it (an older read's link is dropped, so reads never chain up in memory).
   */
  delta?: StreamsDelta<S>;
}

export interface StreamsDelta<S> {
  readonly from: StreamsRead<S>;
  readonly changed: ReadonlyMap<string, S | null>;
}

/** The tips of streams `ids` (absent: no stream), and which of their refs are damaged. */
export function someTips(log: GitAppendLog, ref: (id: string) => string, ids: ReadonlySet<string>): { tips: Map<string, string>; damaged: Set<string> } {
  const tips = new Map<string, string>();
  const damaged = new Set<string>();
  for (const id of ids) {
    const tip = log.tipOrDamage(ref(id));
    if (tip === 'damaged') damaged.add(id);
    else if (tip) tips.set(id, tip);
  }
  return { tips, damaged };
}
