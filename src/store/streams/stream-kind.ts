import type { EventKey } from '../../events/index.js';

/**
 * What the one generic stream store needs to know about a kind of stream (issue threads, sessions, eval
 * readings): where its refs live, how its stored events parse, how they fold, and how a command is
 * decided against the folded state. Everything else (reading chains, caching folds, compare-and-swap
 * appends) is the store's, written once.
 */
export interface StreamKind<E extends StoredEvent, S, C> {
  /** The noun used in messages: `thread`, `session`. */
  readonly noun: string;
  /** Every stream of this kind is a ref below this prefix, named by its id: `refs/trellis/issues/`. */
  readonly refPrefix: string;
  /** The state of a stream with no events yet. */
  initial(id: string): S;
  /** Folds one event; must be idempotent for an event it has already applied (merges replay events). */
  evolve(state: S, event: E): S;
  /** Parses one stored `event.json`, or says in one line why it is not an event of this kind. */
  parse(text: string): { ok: true; event: E } | { ok: false; reason: string };
  /** The events a command produces against the current state; throws a TrellisError when refused. */
  decide(state: S, command: C): E[];
  /** The commit subject of an event, so `git log <ref>` reads as an audit; `before`: the stream's state, when known. */
  describe(event: E, before?: S): string;
  /** The type of the event every stream of this kind begins with: `opened`, `spawned`. */
  readonly firstEvent: string;
  /** Whether a folded state is a stream that exists (its log began with `firstEvent`). */
  exists(state: S): boolean;
  /**
   * The (clock, at, id) key of the latest event folded into `state`. Events fold in that order
   * (orderEvents), so an event read after it that does not sort after it (a merge brought in the other
   * clone's events) means the stream is folded again from its root.
   */
  lastKey(state: S): EventKey;
}

/** The fields every stored event carries (DESIGN.md §4): who, when, and its Lamport clock. */
export interface StoredEvent {
  readonly at: string;
  readonly by: string;
  readonly clock: number;
  /** A stable id, on kinds and formats that mint one (thread events v2); the fold's last tie-breaker. */
  readonly id?: string;
}
