import { TrellisError } from './errors.js';
import type { ThreadCommand, ThreadFacts } from './thread-commands.js';
import { contentId } from './content-id.js';
import { EVENT_FORMAT, type ScenarioScope, type ThreadEvent } from './thread-events.js';

type EventOf<T extends ThreadEvent['type']> = Extract<ThreadEvent, { type: T }>;

/**
 * Decides what a command means for a thread in its current state: the events to append, `[]` when the
 * command is already satisfied (resolving a resolved remark), or a TrellisError with a stable code.
 * Pure: the caller hands in `by` and `at` and re-decides after a lost compare-and-swap.
 */
export function decideThread(state: ThreadFacts, command: ThreadCommand): ThreadEvent[] {
  // The state's clock is the largest folded (the max over a merge's parents), so a new event sorts last.
  let clock = state.clock;
  let n = 0;
  const event = <T extends ThreadEvent['type']>(type: T, data: EventOf<T>['data']): EventOf<T> => {
    const c = ++clock;
    const i = n++;
    const id = command.eventId ? (i === 0 ? command.eventId : `${command.eventId}-${i}`) : contentId([type, command.at, command.by, c, data]);
    return { v: EVENT_FORMAT, id, type, at: command.at, by: command.by, clock: c, data } as EventOf<T>;
  };

  if (command.type === 'open') {
    if (state.status !== 'absent') throw new TrellisError('THREAD_EXISTS', 'a thread with this id already exists');
    const data = { concern: command.concern, body: command.body, nodes: [...command.nodes] };
    return [event('opened', command.scope ? { ...data, scope: scenarioScope(command.scope) } : data)];
  }
  if (state.status === 'absent') throw new TrellisError('THREAD_NOT_FOUND', 'no such thread');

  switch (command.type) {
    case 'reply':
      return [event('replied', { body: command.body, evidence: [...command.evidence] })];
    case 'remark':
      return [event('remarked', { body: command.body, reading: command.reading, evidence: [...command.evidence] })];
    case 'resolve':
    case 'unresolve': {
      const reply = existingReply(state, command.reply);
      if (reply.resolved === undefined) {
        throw new TrellisError('NOT_A_REMARK', `reply ${command.reply} is a plain reply, not a remark: only remarks resolve`);
      }
      if (reply.retracted) throw new TrellisError('REPLY_RETRACTED', `reply ${command.reply} is retracted`);
      const wanted = command.type === 'resolve';
      if (reply.resolved === wanted) return [];
      return [event(wanted ? 'resolved' : 'unresolved', { reply: replyId(state, command.reply) })];
    }
    case 'retract': {
      const reply = existingReply(state, command.reply);
      if (reply.retracted) return [];
      return [event('retracted', { reply: replyId(state, command.reply) })];
    }
    case 'close':
      if (state.status !== 'open') throw new TrellisError('THREAD_NOT_OPEN', `the thread is ${state.status}: only an open thread closes`);
      return [event('closed', command.session ? { session: command.session } : {})];
    case 'edit': {
      // Only what differs is recorded; an edit that changes nothing writes nothing.
      const data = {
        ...(command.concern !== undefined && command.concern !== state.concern ? { concern: command.concern } : {}),
        ...(command.body !== undefined && command.body !== state.body ? { body: command.body } : {}),
      };
      if (state.url) throw new TrellisError('NOT_SUPPORTED', `the thread was promoted to ${state.url}: edit it there`);
      return Object.keys(data).length ? [event('edited', data)] : [];
    }
    case 'reopen':
      if (state.status === 'open') return [];
      if (state.url) throw new TrellisError('NOT_SUPPORTED', `the thread was promoted to ${state.url}: it lives on its forge now; reopen it there`);
      return [event('reopened', {})];
    case 'promote':
      if (state.status !== 'open') throw new TrellisError('THREAD_NOT_OPEN', `the thread is ${state.status}: only an open thread promotes`);
      // The permalink reply is the trail a reader of the local thread follows to the forge.
      return [
        event('replied', { body: `Promoted to ${command.forgeId}: ${command.url}`, evidence: [] }),
        event('promoted', { forgeId: command.forgeId, url: command.url }),
      ];
    default:
      return assertNever(command);
  }
}

/** A copy of a scenario scope with only its known fields (old threads carry the scenario alone). */
export function scenarioScope(s: ScenarioScope): ScenarioScope {
  return {
    scenario: s.scenario,
    ...(s.reading !== undefined ? { reading: s.reading } : {}),
    ...(s.originator !== undefined ? { originator: s.originator } : {}),
  };
}

function existingReply(state: ThreadFacts, n: number) {
  const reply = Number.isInteger(n) && n >= 1 ? state.replies[n - 1] : undefined;
  if (!reply) throw new TrellisError('REPLY_NOT_FOUND', `no reply ${n}: the thread has ${state.replies.length} replies, numbered from 1`);
  return reply;
}

/** The stored name of reply `n` (a position, as typed): its event id. */
const replyId = (state: ThreadFacts, n: number): string => state.replyIds[n - 1]!;

function assertNever(x: never): never {
  throw new Error(`unhandled command ${JSON.stringify(x)}`);
}
