import type { SessionState } from './session.js';
import { addTotals, usageBuckets, zeroTotals, type TokenTotals } from './session-usage.js';

/**
 * What the project's sessions spent today and this week (issue 42, "the project and the host: today, this
 * week"), in UTC like the daily budget: today from 00:00 UTC, this week from Monday 00:00 UTC. Beside every
 * cost report whatever its `by` and `since`, so the page and the host read both in one GET.
 */
export interface SpendSince extends TokenTotals {
  /** Where the period starts (ISO, UTC midnight). */
  readonly since: string;
}

export interface ProjectSpend {
  readonly today: SpendSince;
  readonly week: SpendSince;
  /** `sessions.budgetUsdPerDay` of trellis.json: what today's spend is held against, or null when none is set. */
  readonly budgetUsdPerDay: number | null;
}

/** 00:00 UTC of `now`'s day. */
export const dayStart = (now: Date): string => `${now.toISOString().slice(0, 10)}T00:00:00.000Z`;

/** 00:00 UTC of the Monday of `now`'s week (ISO weeks start on Monday). */
export function weekStart(now: Date): string {
  const back = (now.getUTCDay() + 6) % 7;
  return dayStart(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - back)));
}

/** Today's and this week's totals over every session's recorded responses (shells have none). */
export function projectSpend(states: readonly SessionState[], now: Date, budgetUsdPerDay: number | null): ProjectSpend {
  const day = dayStart(now);
  const week = weekStart(now);
  let today = zeroTotals;
  let sinceMonday = zeroTotals;
  for (const s of states) {
    if (s.status === 'absent' || s.harness === 'shell') continue;
    for (const b of usageBuckets(s.usage, week)) {
      sinceMonday = addTotals(sinceMonday, b);
      if (b.hour >= day.slice(0, 13)) today = addTotals(today, b);
    }
  }
  return { today: { since: day, ...today }, week: { since: week, ...sinceMonday }, budgetUsdPerDay };
}
