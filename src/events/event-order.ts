/**
 * The one order every stream kind folds in, so every clone folds the same events to the same state:
 * by Lamport clock, then `at`, then event id. Two clones that wrote to one stream offline hold events
 * with equal clocks; after a merge the fold reads both sides, and this order (not the order commits
 * happen to be walked in) decides which comes first. Events without an id (thread format v1, sessions,
 * evals) compare with an empty id: their clocks are unique along the linear chain that wrote them.
 */
export interface EventKey {
  readonly clock: number;
  readonly at: string;
  readonly id: string;
}

/** What the order needs of an event: every stored event has these. */
export interface OrderedEvent {
  readonly clock: number;
  readonly at: string;
  readonly id?: string;
}

/** The key an event sorts by. */
export const keyOf = (e: OrderedEvent): EventKey => ({ clock: e.clock, at: e.at, id: e.id ?? '' });

/** The key before every event: a stream with nothing folded yet. */
export const NO_KEY: EventKey = { clock: 0, at: '', id: '' };

/** Negative when `a` folds before `b`, 0 when they are the same event, positive after. */
export function compareKeys(a: EventKey, b: EventKey): number {
  if (a.clock !== b.clock) return a.clock - b.clock;
  if (a.at !== b.at) return a.at < b.at ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Whether `event` folds strictly after `last`: an event at or before it is a replay or out of order. */
export const isAfter = (event: OrderedEvent, last: EventKey): boolean => compareKeys(keyOf(event), last) > 0;

/**
 * The events in fold order with duplicates (the same key: one event delivered twice, by two merged
 * histories or a re-import) kept once. Stable for anything else, and never mutates its input.
 */
export function orderEvents<E extends OrderedEvent>(events: readonly E[]): E[] {
  // A linear chain is already in order (each event's clock is its parent's + 1): no sort, no copies of keys.
  let ordered = true;
  for (let i = 1; i < events.length && ordered; i++) ordered = compareKeys(keyOf(events[i - 1]!), keyOf(events[i]!)) < 0;
  if (ordered) return [...events];
  const sorted = events.map((e) => ({ e, k: keyOf(e) })).sort((a, b) => compareKeys(a.k, b.k));
  const out: E[] = [];
  for (let i = 0; i < sorted.length; i++) {
    if (i > 0 && compareKeys(sorted[i - 1]!.k, sorted[i]!.k) === 0) continue;
    out.push(sorted[i]!.e);
  }
  return out;
}
