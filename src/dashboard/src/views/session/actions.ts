import type { SessionView as Session } from '../../types';

/*
 * Which session actions the page offers (spec: an action the page shows can succeed): the statuses each
 * verb is accepted in mirror the server's decide (events/decide-session.ts); the rest are left out, and
 * the ones a person looks for are named with the reason in words.
 */

export type Action = 'resume' | 'interrupt' | 'review' | 'check' | 'merge' | 'close' | 'quarantine';

const ACCEPTED: Record<Action, readonly string[]> = {
  resume: ['interrupted', 'quarantined'],
  interrupt: ['starting', 'running', 'awaiting', 'review', 'merging'],
  review: ['running', 'awaiting'],
  // The checks run in the session's worktree, which stays until the session is closed.
  check: ['starting', 'running', 'awaiting', 'review', 'merging', 'interrupted', 'quarantined'],
  merge: ['review'],
  close: ['queued', 'starting', 'running', 'awaiting', 'review', 'merging', 'interrupted', 'quarantined', 'failed'],
  quarantine: ['queued', 'starting', 'running', 'awaiting', 'review', 'merging', 'interrupted', 'failed'],
};

/** Harnesses whose agent is a shell: what is typed into it runs as commands, so it is never asked to merge. */
const TYPES_COMMANDS: ReadonlySet<string> = new Set(['shell']);

/** Statuses no prompt reaches (the server refuses the append). */
export const TAKES_NO_PROMPT: ReadonlySet<string> = new Set(['closed', 'quarantined', 'failed']);

export interface Offered {
  readonly shown: ReadonlySet<Action>;
  /** Why an action a person looks for is not offered now, in words. */
  readonly absent: readonly string[];
  /** The session is ready for a merge only a person can run: show the commands. */
  readonly mergeByHand: boolean;
}

/** The route each verb posts to, as the route table names it: offered only when the login may use it (GET /auth/status). */
export const ROUTE_OF: Record<Action, string> = {
  resume: 'POST /api/sessions/:id/resume',
  interrupt: 'POST /api/sessions/:id/interrupt',
  review: 'POST /api/sessions/:id/review',
  check: 'POST /api/sessions/:id/check',
  merge: 'POST /api/sessions/:id/merge',
  close: 'POST /api/sessions/:id/close',
  quarantine: 'POST /api/sessions/:id/quarantine',
};

const WORD: Record<Action, string> = { resume: 'resume', interrupt: 'interrupt', review: 'request review', check: 'run checks', merge: 'merge', close: 'close', quarantine: 'quarantine' };

/**
 * `merged`: the review bundle found the branch already in trunk (merged by hand, before the session was
 * closed): merging it or putting it up for review again does nothing, so neither is offered; closing is.
 */
export function actionsFor(s: Pick<Session, 'state' | 'harness'> & { readonly reason?: string | null }, mayUse: (route: string) => boolean = () => true, merged = false): Offered {
  /** The verbs this login may not use, taken off what is shown; the words say who may. */
  const holdBack = (shown: Set<Action>, absent: string[]) => {
    const held = (Object.keys(ROUTE_OF) as Action[]).filter((a) => shown.has(a) && !mayUse(ROUTE_OF[a]) && shown.delete(a));
    if (held.length) {
      const list = held.map((a) => WORD[a]);
      const words = list.length > 1 ? `${list.slice(0, -1).join(', ')} and ${list.at(-1)}` : list[0]!;
      absent.push(`${words[0]!.toUpperCase()}${words.slice(1)}: this login may not; the admin login may (running commands needs it, or a project password that grants it).`);
    }
    return held.length > 0;
  };
  const shown = new Set<Action>((Object.keys(ACCEPTED) as Action[]).filter((a) => ACCEPTED[a].includes(s.state)));
  // Stopped at its budget (issue 42): a person resumes it once the budget is raised (the resume re-checks it).
  if (s.state === 'awaiting' && s.reason === 'budget') shown.add('resume');
  const absent: string[] = [];
  if (merged && shown.has('close')) {
    shown.delete('merge');
    shown.delete('review');
    absent.push('Merge: its branch is already in trunk. Close the session to finish it.');
    holdBack(shown, absent);
    return { shown, absent, mergeByHand: false };
  }
  const byHand = TYPES_COMMANDS.has(s.harness);
  if (byHand) shown.delete('merge');
  if (!ACCEPTED.merge.includes(s.state) && ACCEPTED.close.includes(s.state)) absent.push(`Merge is offered once the session is up for review; it is ${s.state} now.`);
  if (s.state === 'quarantined') absent.push('Interrupt, review and merge: the session is quarantined (its agent is stopped); resume it first.');
  holdBack(shown, absent);
  // The commands to merge by hand are for whoever may merge here.
  return { shown, absent, mergeByHand: byHand && s.state === 'review' && mayUse(ROUTE_OF.merge) };
}

/**
 * The one next step that can succeed now, for the decision strip at the top of the session page: a verb of
 * the lifecycle (its button), or one of the review bundle's own actions (bring trunk in, merge by hand,
 * close the fixed issue), or answering the agent's dialog. `wait` says in words why there is nothing to do
 * yet (null: nothing is left to do). Only what `offered` shows is ever picked, so the step can succeed.
 */
export type NextStep =
  | { readonly kind: 'verb'; readonly verb: Action }
  | { readonly kind: 'answer' | 'bring-trunk-in' | 'merge-by-hand' | 'close-issue' }
  | { readonly kind: 'wait'; readonly why: string | null };

/** What of the review bundle the next step reads (null: not loaded). */
export interface BundleFacts {
  readonly merged: boolean;
  readonly ready: boolean;
  readonly conflicts: boolean;
  readonly byHand: boolean;
}

export function nextStep(s: Pick<Session, 'state' | 'reason' | 'issue'>, offered: Offered, b: BundleFacts | null, mayAnswer: boolean): NextStep {
  const verb = (v: Action): NextStep | null => (offered.shown.has(v) ? { kind: 'verb', verb: v } : null);
  if (s.state === 'awaiting' && ['permission', 'question', 'setup', 'dialog'].includes(s.reason ?? '') && mayAnswer) return { kind: 'answer' };
  if (s.state === 'awaiting' && s.reason === 'stalled') return { kind: 'wait', why: 'Its turn has said nothing for a long while and has not finished; it is not retried. Press Esc in its terminal to stop the turn, or close the session.' };
  if (s.state === 'awaiting' && s.reason === 'budget') return { kind: 'wait', why: 'Its agent was stopped at its budget: raise sessions.budgetUsd (or budgetUsdPerDay) in trellis.json, then resume it; or close it.' };
  if (b?.merged) return s.issue ? { kind: 'close-issue' } : (verb('close') ?? { kind: 'wait', why: null });
  if (s.state === 'interrupted' || s.state === 'quarantined') return verb('resume') ?? { kind: 'wait', why: `The session is ${s.state}; this login may not resume it.` };
  if (s.state === 'closed' || s.state === 'failed') return { kind: 'wait', why: null };
  // A prompt to bring trunk in is held until the agent waits, so a starting agent is asked too.
  if (b?.conflicts) return { kind: 'bring-trunk-in' };
  if (s.state === 'queued' || s.state === 'starting') return { kind: 'wait', why: `The session is ${s.state}: nothing to decide yet.` };
  if (s.state === 'merging') return { kind: 'wait', why: 'The agent is merging its branch.' };
  if (!b) return verb('check') ?? { kind: 'wait', why: 'Running the checks needs a login that may run commands.' };
  if (!b.ready) return verb('check') ?? { kind: 'wait', why: 'The checks block the merge; this login may not run them.' };
  if (s.state === 'review') return offered.mergeByHand && b.byHand ? { kind: 'merge-by-hand' } : (verb('merge') ?? { kind: 'wait', why: 'Ready to merge; this login may not merge.' });
  return verb('review') ?? { kind: 'wait', why: 'Ready for review; this login may not request it.' };
}
