import { TrellisError } from './errors.js';
import type { SessionCommand, SessionFacts, SessionStatus } from './session-commands.js';
import { SESSION_EVENT_FORMAT, type SessionEvent } from './session-events.js';

type EventOf<T extends SessionEvent['type']> = Extract<SessionEvent, { type: T }>;

/** The status named the way a refusal says it: `awaiting{permission}`, `closed`. */
export const statusLabel = (s: { status: SessionStatus | 'absent'; reason: string | null }): string => (s.reason ? `${s.status}{${s.reason}}` : s.status);

/** Which statuses a command is accepted in (the rest refuse, naming the current status). */
const ACCEPTS: Record<Exclude<SessionCommand['type'], 'spawn' | 'prompt' | 'deliver' | 'undeliver' | 'identify' | 'view' | 'await' | 'idle' | 'busy' | 'answer' | 'fix-checks' | 'record-usage'>, readonly SessionStatus[]> = {
  start: ['queued', 'awaiting'],
  launch: ['starting'],
  fail: ['queued', 'starting'],
  interrupt: ['starting', 'running', 'awaiting', 'review', 'merging'],
  resume: ['interrupted', 'quarantined'],
  review: ['running', 'awaiting'],
  merge: ['review'],
  'override-merge': ['review'],
  close: ['queued', 'starting', 'running', 'awaiting', 'review', 'merging', 'interrupted', 'quarantined', 'failed'],
  quarantine: ['queued', 'starting', 'running', 'awaiting', 'review', 'merging', 'interrupted', 'failed'],
  'turn-fail': ['starting', 'running', 'awaiting', 'merging'],
  'accept-check': ['starting', 'running', 'awaiting', 'review', 'merging', 'interrupted'],
};

/** Statuses in which the agent's own turn signals move the state. */
const AGENT_DRIVEN: readonly SessionStatus[] = ['starting', 'running', 'awaiting'];
/** Statuses the user owns: the agent's turn signals there change nothing (a Stop after review is expected). */
const USER_OWNED: readonly SessionStatus[] = ['review', 'merging'];
/** Statuses no prompt reaches: the append itself is refused (spec §4.2 rule 1). */
const NO_PROMPT: readonly SessionStatus[] = ['closed', 'quarantined', 'failed'];

/** Statuses in which the session follows the agent's own waits although the user owns the status. */
const FOLLOWS_AGENT = (s: SessionStatus | 'absent'): boolean => s === 'awaiting' || USER_OWNED.includes(s as SessionStatus);

const WAITS_FOR: Record<string, string> = {
  permission: 'the agent shows a permission dialog (answer it with raw keys)',
  question: 'the agent asks a question (answer it with raw keys)',
  auth: 'the agent cannot use its provider until its login or billing is fixed',
  setup: 'the agent shows a setup dialog (answer it with raw keys)',
  dialog: 'the agent shows a dialog (answer it by its option: trellis session answer)',
  budget: 'the session reached its budget and its agent was stopped (raise sessions.budgetUsd or budgetUsdPerDay in trellis.json, then resume it)',
};

/** A session Trellis stopped at its budget (issue 42): only a person moves it (resume after raising the budget, or close). */
const atBudget = (state: SessionFacts): boolean => state.status === 'awaiting' && state.reason === 'budget';

/**
 * Why a prompt cannot be typed into the pane now, or null when it can (DESIGN.md §9, Input): only an
 * agent waiting at the end of its turn takes a prompt, and one that works only when it is shown to
 * queue typed input (`queuesInput`). Anywhere else the keys would answer a dialog or be lost.
 */
export function promptHold(state: SessionFacts, queuesInput: boolean): string | null {
  const status = state.status;
  let why: string;
  if (FOLLOWS_AGENT(status) && state.waiting === 'turn-end') return null;
  if ((status === 'running' || (USER_OWNED.includes(status as SessionStatus) && state.waiting === null)) && queuesInput) return null;
  if (FOLLOWS_AGENT(status) && state.waiting !== null) why = WAITS_FOR[state.waiting] ?? `the agent waits for ${state.waiting}`;
  else if (status === 'running' || USER_OWNED.includes(status as SessionStatus)) why = 'the agent is working and does not take typed input mid-turn';
  else if (status === 'starting' || status === 'queued') why = 'the agent has not started yet';
  else why = `the agent is not running (the session is ${statusLabel({ status, reason: state.reason })}; resume it)`;
  return `${why}: the prompt waits on the timeline and is delivered when the agent next waits for input`;
}

/**
 * Decides what a command means for a session in its current state: the events to append, `[]` when
 * the command is already satisfied (a repeated idle notification, a second view), or a TrellisError
 * with a stable code whose message names the current state. Pure: the caller hands in who, when and
 * from which source, and re-decides after a lost compare-and-swap.
 */
export function decideSession(state: SessionFacts, command: SessionCommand): SessionEvent[] {
  let clock = state.clock;
  const event = <T extends SessionEvent['type']>(type: T, data: EventOf<T>['data']): EventOf<T> =>
    ({ v: SESSION_EVENT_FORMAT, type, at: command.at, by: command.by, clock: ++clock, source: command.source, data }) as EventOf<T>;

  if (command.type === 'spawn') {
    if (state.status !== 'absent') throw new TrellisError('SESSION_EXISTS', 'a session with this id already exists');
    const { harness, task, nodes, issue, base, branch, worktree, checks } = command;
    const spawned = event('spawned', { harness, task, nodes: [...nodes], issue, base, branch, worktree });
    return checks ? [spawned, event('checks-fixed', { base: checks.base, scenarios: [...checks.scenarios], issueChecks: [...checks.issueChecks] })] : [spawned];
  }
  if (state.status === 'absent') throw new TrellisError('SESSION_NOT_FOUND', 'no such session');
  const status = state.status;
  const refuse = (what: string): never => {
    throw new TrellisError('SESSION_REFUSED', `the session is ${statusLabel({ status, reason: state.reason })}: ${what}`);
  };
  const accept = (type: keyof typeof ACCEPTS, what: string) => {
    if (!ACCEPTS[type].includes(status)) refuse(`${what} (only from ${ACCEPTS[type].join(', ')})`);
  };

  // A prompt reaching an agent that waited: it is working again.
  const answered = (): SessionEvent[] => (FOLLOWS_AGENT(status) && state.waiting !== null ? [event('running', {})] : []);

  switch (command.type) {
    case 'start':
      // Also a setup dialog read from the pane that is gone again: the agent is starting, its first signal still to come.
      if (status === 'awaiting' && state.reason !== 'setup') refuse('only a queued session, or one past its setup dialog, starts');
      accept('start', 'only a queued session starts');
      return [event('starting', {})];
    case 'launch':
      // The agent's first hooks can land before the launcher logs the launch: the launch still records.
      const version = { ...(command.agentVersion ? { agentVersion: command.agentVersion } : {}), ...(command.confined ? { confined: command.confined } : {}), ...(command.unconfined ? { unconfined: command.unconfined } : {}) };
      if (state.tmux === null && (status === 'running' || status === 'awaiting')) return [event('launched', { tmuxSession: command.tmuxSession, pane: command.pane, ...version })];
      accept('launch', 'only a starting session is launched');
      return [event('launched', { tmuxSession: command.tmuxSession, pane: command.pane, ...(command.awaitsSignal ? { awaitsSignal: true } : {}), ...version })];
    case 'fail':
      accept('fail', 'only a session that is starting up fails');
      return [event('failed', { reason: command.reason })];
    case 'identify':
      if (status === 'closed') refuse('a closed session learns no agent session id');
      // An agent that names its session is up: its first signal ends `starting` (and any setup dialog).
      if (status === 'starting' || pastSetup(state)) {
        return [...(state.agentSessionId === command.agentSessionId ? [] : [event('identified', { agentSessionId: command.agentSessionId })]), event('running', {})];
      }
      if (state.agentSessionId === command.agentSessionId) return [];
      return [event('identified', { agentSessionId: command.agentSessionId })];
    case 'prompt': {
      if (NO_PROMPT.includes(status)) {
        throw new TrellisError('PROMPT_REFUSED', `the session is ${statusLabel({ status, reason: state.reason })}: it takes no prompt`);
      }
      // Held prompts go first: a new one waits behind them.
      const held = state.pending.length > 0 ? 'earlier prompts wait to be delivered first' : promptHold(state, command.queuesInput ?? false);
      if (held) return [event('prompted', { body: command.body, held })];
      return [event('prompted', { body: command.body }), ...answered()];
    }
    case 'deliver': {
      const index = state.pending[0];
      if (index === undefined || NO_PROMPT.includes(status) || promptHold(state, command.queuesInput ?? false)) return [];
      return [event('delivered', { index }), ...answered()];
    }
    case 'undeliver': {
      const entry = state.timeline?.[command.index];
      const reason = `${command.reason}; held: it is typed once the agent's input box is empty`;
      if (!entry || NO_PROMPT.includes(status) || entry.held === reason) return [];
      // Its typing answered the wait (running, or a user-owned status's wait cleared): the agent still sits at it.
      const answeredWait = status === 'running' || (USER_OWNED.includes(status as SessionStatus) && state.waiting === null);
      const held = event('undelivered', { index: command.index, reason });
      return command.waiting && answeredWait ? [held, event('awaiting', { reason: command.waiting, idle: true })] : [held];
    }
    case 'await': {
      // The stopped agent's last signals (its turn's end as it dies) do not move a session held at its budget.
      if (atBudget(state) && command.reason !== 'budget') return [];
      const detail = command.detail ? { detail: command.detail } : {};
      if (command.reason === 'setup') {
        // Read from the pane before the agent's first signal; once it has signalled, a late reading changes nothing.
        if (status === 'starting' || (pastSetup(state) && state.detail !== (command.detail ?? null))) return [event('awaiting', { reason: 'setup', ...detail })];
        return [];
      }
      // The user owns review and merging; the session still follows what the agent waits for.
      if (USER_OWNED.includes(status)) return state.waiting === command.reason ? [] : [event('awaiting', { reason: command.reason, ...detail })];
      if (!AGENT_DRIVEN.includes(status)) refuse(`a turn signal (${command.reason}) applies only while the agent works`);
      // A Stop ends any wait (a permission approved, then the turn finished); only a repeat is nothing.
      if (status === 'awaiting' && state.reason === command.reason && (command.detail === undefined || command.detail === state.detail)) return [];
      return [event('awaiting', { reason: command.reason, ...detail })];
    }
    case 'idle':
      if (atBudget(state)) return [];
      // An idle agent that was working has ended its turn; one already waiting (a dialog, its login) still waits for that.
      // Marked `idle`: an idle notice is no turn that ended well, so it never clears the failure streak
      // (claude's comes 1.5–60 s after a failed turn, possibly after the next prompt went in).
      if (status === 'starting' || status === 'running' || (USER_OWNED.includes(status) && state.waiting === null)) return [event('awaiting', { reason: 'turn-end', idle: true })];
      return [];
    case 'busy':
      if (atBudget(state)) return [];
      if (command.left !== undefined && !(status === 'awaiting' && state.reason === command.left)) return [];
      if (USER_OWNED.includes(status)) return state.waiting === null ? [] : [event('running', {})];
      // The agent's first signal ends `starting`.
      if (status === 'starting') return [event('running', {})];
      if (status === 'running') return [];
      if (status !== 'awaiting') refuse('a busy signal applies only while the agent works');
      return [event('running', {})];
    case 'interrupt':
      // The agent Trellis stopped at its budget exits (its pane dies): expected, the session still waits for a person.
      if (atBudget(state) && command.source !== 'user') return [];
      accept('interrupt', 'only a session with a live agent is interrupted');
      return [event('interrupted', { reason: command.reason, ...(command.detail ? { detail: command.detail } : {}) })];
    case 'resume':
      // A person resumes a session held at its budget (the verb checked the budget was raised first).
      if (atBudget(state)) return [event('resumed', {})];
      accept('resume', 'only an interrupted or quarantined session resumes');
      return [event('resumed', {})];
    case 'review':
      accept('review', 'only a running or awaiting session is put up for review');
      return [event('review-requested', {})];
    case 'merge':
      accept('merge', 'only a session in review merges');
      return [event('merge-dispatched', {})];
    case 'override-merge':
      accept('override-merge', 'only a session in review overrides its merge gate');
      if (command.reason.trim() === '') throw new TrellisError('INVALID_INPUT', 'an override of the merge gate needs a reason');
      return [event('merge-overridden', { reason: command.reason.trim(), scenarios: [...command.scenarios] })];
    case 'close':
      accept('close', 'a closed session does not close again');
      return [event('closed', { wip: command.wip })];
    case 'quarantine':
      accept('quarantine', 'only a session that is neither closed nor quarantined is quarantined');
      return [event('quarantined', { reason: command.reason, wip: command.wip })];
    case 'turn-fail':
      accept('turn-fail', 'a turn fails only while the agent works');
      return [event('turn-failed', { reason: command.reason })];
    case 'answer':
      // A fact about what a person did (the keys are typed already): recorded whatever the status now.
      if (command.option.trim() === '') throw new TrellisError('INVALID_INPUT', 'an answer names its option');
      return [event('answered', { option: command.option, via: command.via })];
    case 'view':
      return state.unread ? [event('viewed', {})] : [];
    case 'fix-checks':
      // Once, at dispatch: what was fixed then is never rewritten.
      if (state.fixedChecks) throw new TrellisError('SESSION_REFUSED', "the session's checks were fixed at dispatch and are not fixed again");
      return [event('checks-fixed', { base: command.base, scenarios: [...command.scenarios], issueChecks: [...command.issueChecks] })];
    case 'accept-check':
      accept('accept-check', 'only a live or interrupted session has a check to accept');
      if (command.reason.trim() === '') throw new TrellisError('INVALID_INPUT', "accepting a check's new definition needs a reason");
      return [event('check-accepted', { reason: command.reason.trim(), scenarios: [...command.scenarios] })];
    case 'record-usage': {
      // Another reader took these bytes first (a command hook and an HTTP hook at once): nothing twice.
      if ((state.usageRead?.[command.file] ?? 0) !== command.from || command.to <= command.from) return [];
      const { agent, file, from, to, entries, turns, context } = command;
      return [event('usage', { agent, file, from, to, entries: entries.map((e) => ({ ...e })), turns, context })];
    }
    default:
      return assertNever(command);
  }
}

/** Awaiting a setup dialog read from the pane: any signal of the agent's own means it is past it. */
const pastSetup = (state: SessionFacts): boolean => state.status === 'awaiting' && state.reason === 'setup';

function assertNever(x: never): never {
  throw new Error(`unhandled command ${JSON.stringify(x)}`);
}
