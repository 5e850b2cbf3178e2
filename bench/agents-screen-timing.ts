import { setTimeout as sleep } from 'node:timers/promises';
import type { SessionState } from '../src/projections/index.js';
import { capturePane } from '../src/store/sessions/tmux/pane-capture.js';
import type { PaneTarget } from '../src/store/sessions/tmux/pane-target.js';

/** A state as the agents bench names it: status{reason}. */
export const label = (s: SessionState): string => (s.reason ? `${s.status}{${s.reason}}` : s.status);

/** Polls until `check` gives a value or the limit passes (null). */
export async function poll<T>(check: () => Promise<T | null>, until: number): Promise<T | null> {
  while (performance.now() < until) {
    const v = await check().catch(() => null);
    if (v !== null) return v;
    await sleep(25);
  }
  return null;
}

/**
 * One agents-bench run: the screen and the session's state polled side by side until `until`. When a
 * line matching `screen` showed (the task's own echo is not the change) and when the state became `expect`;
 * what the state last was and, for a run that never reached it, what the screen said instead.
 */
export async function screenAgainstState(target: PaneTarget, task: string, screen: RegExp, expect: string, stateOf: () => Promise<SessionState>, until: number) {
  let state = '';
  let matched = '';
  const [screenAt, stateAt] = await Promise.all([
    poll(async () => {
      const line = (await capturePane(target)).text.split('\n').find((l) => screen.test(l) && !l.includes(task));
      if (line === undefined) return null;
      matched = line.trim();
      return performance.now();
    }, until),
    poll(async () => {
      state = label(await stateOf());
      return state === expect ? performance.now() : null;
    }, until),
  ]);
  const missedScreen = stateAt === null ? (await capturePane(target).catch(() => ({ text: '' }))).text.split('\n').map((l) => l.trim()).filter(Boolean).slice(-4).join(' | ').slice(0, 300) : null;
  return { screenAt, stateAt, state, matched, missedScreen };
}
