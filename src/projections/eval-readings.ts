import { isAfter, scenarioOfKey, type EventKey, type EvalEvent, type Outcome, type Reading } from '../events/index.js';

/** The fold of one scenario's stream: every reading filed, oldest first. */
export interface EvalState {
  /** The stream id: the scenario's ref key. */
  readonly key: string;
  readonly scenario: string;
  readonly clock: number;
  /** `at` of the latest event folded (with `clock`, the fold's position). */
  readonly lastAt: string;
  readonly readings: readonly Reading[];
}

export const initialEval = (key: string): EvalState => ({ key, scenario: scenarioOfKey(key), clock: 0, lastAt: '', readings: [] });

/** Where a scenario's fold stands: the key of the latest event folded (eval events carry no id). */
export const evalLastKey = (s: EvalState): EventKey => ({ clock: s.clock, at: s.lastAt, id: '' });

/** Applies one event; an event not past the latest one folded (clock, at) is a replay and changes nothing. */
export function evolveEval(state: EvalState, event: EvalEvent): EvalState {
  if (!isAfter(event, evalLastKey(state))) return state;
  return { ...state, clock: event.clock, lastAt: event.at, readings: [...state.readings, { ...event.data, by: event.by, at: event.at }] };
}

/** Folds a scenario's events, oldest first, from nothing. */
export const foldEval = (key: string, events: readonly EvalEvent[]): EvalState => events.reduce(evolveEval, initialEval(key));

/** How many past outcomes a scoreboard cell shows. */
export const LAST_OUTCOMES = 10;

/** One scope's part of a scenario's readings: the latest, the last outcomes (newest first) and the count. */
export interface ScopeReadings {
  readonly latest: Reading;
  readonly last: readonly Outcome[];
  readonly count: number;
  /** This scope's readings, oldest first. */
  readonly readings: readonly Reading[];
}

/** Groups a scenario's readings by scope. A later `at` is later; ties keep filing order. */
export function readingsByScope(state: EvalState): Map<string, ScopeReadings> {
  const groups = new Map<string, Reading[]>();
  for (const r of state.readings) {
    const g = groups.get(r.scope);
    if (g) g.push(r);
    else groups.set(r.scope, [r]);
  }
  const out = new Map<string, ScopeReadings>();
  for (const [scope, list] of groups) {
    // Filing order is clock order; a reading filed late with an earlier `at` (an imported measurement)
    // still sorts by when it was measured.
    const sorted = isSortedByAt(list) ? list : [...list].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
    const last: Outcome[] = [];
    for (let i = sorted.length - 1; i >= 0 && last.length < LAST_OUTCOMES; i--) last.push(sorted[i]!.outcome);
    out.set(scope, { latest: sorted[sorted.length - 1]!, last, count: sorted.length, readings: sorted });
  }
  return out;
}

function isSortedByAt(list: readonly Reading[]): boolean {
  for (let i = 1; i < list.length; i++) if (list[i - 1]!.at > list[i]!.at) return false;
  return true;
}
