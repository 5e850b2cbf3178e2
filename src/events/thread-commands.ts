import type { ReplyNumber, ScenarioScope } from './thread-events.js';

/** Who and when, handed in by the caller: `decide` never reads the clock. */
export interface CommandMeta {
  readonly by: string;
  readonly at: string;
  /**
   * The id of the (first) event this command writes, minted by the caller from randomness so ids are
   * unique across clones; without one, ids are derived from the event's content.
   */
  readonly eventId?: string;
}

export type ThreadCommand = CommandMeta &
  (
    | { readonly type: 'open'; readonly concern: string; readonly body: string; readonly nodes: readonly string[]; readonly scope?: ScenarioScope }
    | { readonly type: 'reply'; readonly body: string; readonly evidence: readonly string[] }
    | { readonly type: 'remark'; readonly body: string; readonly reading: string; readonly evidence: readonly string[] }
    | { readonly type: 'resolve'; readonly reply: ReplyNumber }
    | { readonly type: 'unresolve'; readonly reply: ReplyNumber }
    | { readonly type: 'retract'; readonly reply: ReplyNumber }
    | { readonly type: 'close'; readonly session?: string }
    /** A new concern and/or body; a field left out keeps its text. */
    | { readonly type: 'edit'; readonly concern?: string; readonly body?: string }
    | { readonly type: 'reopen' }
    | { readonly type: 'promote'; readonly forgeId: string; readonly url: string }
  );

/**
 * The facts `decide` needs about a thread. The thread projection satisfies this shape structurally, so
 * there is one fold, not a second copy for decisions.
 */
export interface ThreadFacts {
  readonly status: 'absent' | 'open' | 'landed';
  readonly clock: number;
  readonly concern: string;
  readonly body: string;
  /** Set once the thread was promoted: it lives on its forge from then on. */
  readonly url?: string;
  readonly replies: readonly { readonly resolved?: boolean; readonly retracted?: boolean }[];
  /** The stable id of each reply, in the order of `replies`: what a stored event names a reply by. */
  readonly replyIds: readonly string[];
}
