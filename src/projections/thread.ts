import { isAfter, orderEvents, scenarioScope, threadEventId, type EventKey, type ReplyRef, type ScenarioScope, type ThreadEvent, type ThreadFacts } from '../events/index.js';
import type { Issue, IssueEvent, IssueTimeline, Reply } from './issue.js';

/** The fold of one local thread: everything the Issue view and `decide` need. */
export interface ThreadState extends ThreadFacts {
  readonly id: string;
  readonly status: 'absent' | 'open' | 'landed';
  readonly clock: number;
  readonly concern: string;
  readonly by: string;
  readonly created: string;
  readonly body: string;
  readonly nodes: readonly string[];
  readonly replies: readonly Reply[];
  readonly evidence: readonly string[];
  /** Which reply (by its position in `replies`) carried which evidence: the timeline read's `carried`, never a Reply field (spec §2.1 rule 3). */
  readonly carried: readonly (readonly string[])[];
  readonly url?: string;
  /** Set on eval-remark threads only. */
  readonly scope?: ScenarioScope;
  /** The latest edit of the concern or body, when there was one (the thread shows "edited"). */
  readonly edited?: { readonly at: string; readonly by: string };
  /** The thread's own changes, in fold order: what its timeline shows between the replies. */
  readonly events: readonly IssueEvent[];
  /** `at` of the latest event: the thread's latest activity. */
  readonly updated: string;
  /** The id of the latest event folded (with `clock` and `updated`, the fold's position). */
  readonly lastId: string;
}

export const initialThread = (id: string): ThreadState => ({
  id,
  status: 'absent',
  clock: 0,
  concern: '',
  by: '',
  created: '',
  body: '',
  nodes: [],
  replies: [],
  evidence: [],
  carried: [],
  replyIds: [],
  events: [],
  updated: '',
  lastId: '',
});

/** Where a thread's fold stands: the key of the latest event folded. */
export const threadLastKey = (s: ThreadState): EventKey => ({ clock: s.clock, at: s.updated, id: s.lastId });

/**
 * Applies one event. Events fold in (clock, at, id) order (see orderEvents); an event not past the
 * latest one folded is a replay (a merge or a re-read can deliver an event twice) and leaves the state
 * as it is.
 */
export function evolveThread(state: ThreadState, event: ThreadEvent): ThreadState {
  if (!isAfter(event, threadLastKey(state))) return state;
  // One copy of the state per event (a cold list folds 50,000 of them): what the event changes is a
  // small object, written over the copy together with the fold's new position.
  return { ...state, ...changeOf(state, event), clock: event.clock, updated: event.at, lastId: event.id ?? '' };
}

/** The fields one event sets. */
function changeOf(state: ThreadState, event: ThreadEvent): Partial<ThreadState> {
  const mark = (type: IssueEvent['type']) => ({ events: [...state.events, { type, by: event.by, at: event.at }] });
  switch (event.type) {
    case 'opened':
      return {
        status: 'open',
        concern: event.data.concern,
        by: event.by,
        created: event.at,
        body: event.data.body,
        nodes: [...event.data.nodes],
        ...mark('opened'),
        ...(event.data.scope ? { scope: scenarioScope(event.data.scope) } : {}),
      };
    case 'replied':
      return {
        replies: [...state.replies, { by: event.by, at: event.at, body: event.data.body }],
        carried: [...state.carried, own(event.data.evidence)],
        replyIds: [...state.replyIds, threadEventId(event)],
        evidence: dedupe(state.evidence, event.data.evidence),
      };
    case 'remarked':
      return {
        replies: [...state.replies, { by: event.by, at: event.at, body: event.data.body, resolved: false, reading: event.data.reading }],
        carried: [...state.carried, own(event.data.evidence)],
        replyIds: [...state.replyIds, threadEventId(event)],
        evidence: dedupe(state.evidence, event.data.evidence),
      };
    case 'resolved':
    case 'unresolved':
      return { replies: patchReply(state, event.data.reply, { resolved: event.type === 'resolved' }) };
    case 'retracted':
      return { replies: patchReply(state, event.data.reply, { retracted: true }) };
    case 'closed':
      return { status: 'landed', events: [...state.events, { type: 'closed', by: event.by, at: event.at, ...(event.data.session ? { session: event.data.session } : {}) }] };
    case 'edited':
      return {
        ...(event.data.concern !== undefined ? { concern: event.data.concern } : {}),
        ...(event.data.body !== undefined ? { body: event.data.body } : {}),
        edited: { at: event.at, by: event.by },
        ...mark('edited'),
      };
    case 'reopened':
      return { status: 'open', ...mark('reopened') };
    case 'promoted':
      return { status: 'landed', url: event.data.url, ...mark('promoted') };
  }
}

/** Folds a thread's events, in any order (they are put in fold order, duplicates once), from nothing. */
export const foldThread = (id: string, events: readonly ThreadEvent[]): ThreadState => orderEvents(events).reduce(evolveThread, initialThread(id));

/** The thread as an Issue (spec §2.1, exactly its fields). Local threads carry no labels; the timeline is `threadTimeline`. */
export function threadIssue(state: ThreadState): Issue {
  return {
    id: state.id,
    store: 'local',
    concern: state.concern,
    by: state.by,
    status: state.status,
    nodes: state.nodes,
    created: state.created,
    body: state.body,
    replies: state.replies,
    evidence: state.evidence,
    labels: [],
    ...(state.url ? { url: state.url } : {}),
  };
}

/** The thread's timeline read: its own changes in fold order (a forge issue's comes from its forge). */
export const threadTimeline = (state: ThreadState): IssueTimeline => ({ id: state.id, events: state.events, carried: carriedByReply(state.carried), notes: [] });

/** A reply's own evidence, deduplicated. */
function own(evidence: readonly string[]): readonly string[] {
  return evidence.filter((h, i) => evidence.indexOf(h) === i);
}

/** `{<reply number>: hashes}` for the replies that carried evidence (numbers from 1, as `issue reply` names them). */
function carriedByReply(carried: readonly (readonly string[])[]): Readonly<Record<string, readonly string[]>> {
  const out: Record<string, readonly string[]> = {};
  carried.forEach((hashes, i) => {
    if (hashes.length) out[String(i + 1)] = hashes;
  });
  return out;
}

function dedupe(have: readonly string[], add: readonly string[]): readonly string[] {
  const fresh = add.filter((h, i) => !have.includes(h) && add.indexOf(h) === i);
  return fresh.length ? [...have, ...fresh] : have;
}

/** A v1 event names a reply by position (v1 replies fold first, in their chain order); v2 by its id. */
function patchReply(state: ThreadState, ref: ReplyRef, patch: Partial<Reply>): readonly Reply[] {
  const { replies } = state;
  const at = typeof ref === 'number' ? ref - 1 : state.replyIds.indexOf(ref);
  // A reference to a reply that does not exist was refused by decide; a hand-made log gets no effect.
  if (at < 0 || at >= replies.length) return replies;
  return replies.map((r, i) => (i === at ? { ...r, ...patch } : r));
}
