import { isAfter, orderEvents } from '../../events/event-order.js';
import type { ChainResult } from '../git/chain.js';
import { parseChain } from './parse-chain.js';
import type { StreamSnapshot } from './projection-cache.js';
import type { StoredEvent, StreamKind } from './stream-kind.js';

/**
 * Folds a chain's events in (clock, at, id) order, each event once, so every clone folds a merged
 * history to the same state. On top of a known base only when every new event sorts after the base's
 * last (the usual append); otherwise ('from-root') the stream must be read and folded whole.
 */
export function foldChain<E extends StoredEvent, S>(
  kind: StreamKind<E, S, unknown>,
  id: string,
  ref: string,
  tip: string,
  base: { tip: string; state: S } | undefined,
  result: ChainResult,
): StreamSnapshot<S> | 'from-root' {
  const parsed = parseChain(kind, result);
  if ('reason' in parsed) return { tip, problem: { id, ref, commit: parsed.commit, reason: parsed.reason } };
  const onBase = result.ok && result.reachedStop && base !== undefined;
  const ordered = orderEvents(parsed.events.map((p) => p.event));
  if (onBase && ordered.length && !isAfter(ordered[0]!, kind.lastKey(base.state))) return 'from-root';
  let state = onBase ? base.state : kind.initial(id);
  for (const event of ordered) state = kind.evolve(state, event);
  if (!kind.exists(state)) return { tip, problem: { id, ref, commit: tip, reason: `the log does not begin with an '${kind.firstEvent}' event` } };
  return { tip, state };
}
