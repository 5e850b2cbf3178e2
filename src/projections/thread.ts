import { scenarioScope, type ScenarioScope, type ThreadEvent, type ThreadFacts } from '../events/index.js';
import type { Issue, Reply } from './issue.js';

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
  readonly url?: string;
  /** Set on eval-remark threads only. */
  readonly scope?: ScenarioScope;
  /** `at` of the latest event: the thread's latest activity. */
  readonly updated: string;
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
  updated: '',
});

/**
 * Applies one event. An event whose clock is not past the state's is a replay (a merge or a re-read can
 * deliver an event twice) and leaves the state as it is.
 */
export function evolveThread(state: ThreadState, event: ThreadEvent): ThreadState {
  if (event.clock <= state.clock) return state;
  const next = { ...state, clock: event.clock, updated: event.at };
  switch (event.type) {
    case 'opened':
      return {
        ...next,
        status: 'open',
        concern: event.data.concern,
        by: event.by,
        created: event.at,
        body: event.data.body,
        nodes: [...event.data.nodes],
        ...(event.data.scope ? { scope: scenarioScope(event.data.scope) } : {}),
      };
    case 'replied':
      return {
        ...next,
        replies: [...state.replies, { by: event.by, at: event.at, body: event.data.body }],
        evidence: dedupe(state.evidence, event.data.evidence),
      };
    case 'remarked':
      return {
        ...next,
        replies: [...state.replies, { by: event.by, at: event.at, body: event.data.body, resolved: false, reading: event.data.reading }],
        evidence: dedupe(state.evidence, event.data.evidence),
      };
    case 'resolved':
    case 'unresolved':
      return { ...next, replies: patchReply(state.replies, event.data.reply, { resolved: event.type === 'resolved' }) };
    case 'retracted':
      return { ...next, replies: patchReply(state.replies, event.data.reply, { retracted: true }) };
    case 'closed':
      return { ...next, status: 'landed' };
    case 'promoted':
      return { ...next, status: 'landed', url: event.data.url };
  }
}

/** Folds a thread's events, oldest first, from nothing. */
export const foldThread = (id: string, events: readonly ThreadEvent[]): ThreadState => events.reduce(evolveThread, initialThread(id));

/** The thread as an Issue (spec §2.1). Local threads carry no labels. */
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

function dedupe(have: readonly string[], add: readonly string[]): readonly string[] {
  const fresh = add.filter((h, i) => !have.includes(h) && add.indexOf(h) === i);
  return fresh.length ? [...have, ...fresh] : have;
}

function patchReply(replies: readonly Reply[], n: number, patch: Partial<Reply>): readonly Reply[] {
  const at = n - 1;
  // A reference to a reply that does not exist was refused by decide; a hand-made log gets no effect.
  if (at < 0 || at >= replies.length) return replies;
  return replies.map((r, i) => (i === at ? { ...r, ...patch } : r));
}
