/**
 * What a session's (or an issue's) model use cost, in words for people (issue 42): the dollars (or that the
 * price is unknown, naming the model), the tokens, the replies and turns, and how full the agent's context is.
 * Pure, so the words are tested without a browser.
 */
import type { ProjectSpend, SessionCost, TokenTotals, UsageView } from '../../projections/index.js';
import { budgetDollars, dollars } from '../../projections/money.js';
import type { ProjectRow } from '../../projections/project-row.js';

const n = (x: number): string => x.toLocaleString('en-US');

/** Dollars as people read them (money.ts: `$0.42`, `< $0.01`), or why there are none. */
export function moneyWords(t: Pick<TokenTotals, 'usd' | 'unpriced'>): string {
  const money = dollars(t.usd);
  if (t.unpriced.length && t.usd === 0) return `price unknown (${t.unpriced.join(', ')})`;
  return t.unpriced.length ? `${money} + price unknown (${t.unpriced.join(', ')})` : money;
}

export interface CostWords {
  /** The headline: `$0.42 · 12,345 tokens · 3 replies · 2 turns`. */
  readonly line: string;
  /** Per model, when more than one model answered. */
  readonly models: readonly string[];
  /** How full the context is, or null when unknown. */
  readonly context: { readonly text: string; readonly percent: number | null; readonly warn: string | null } | null;
}

/** The session page's cost card; null when nothing is recorded yet; the shell's own sentence for a shell. */
export function costWords(u: UsageView | undefined): CostWords | string | null {
  if (!u) return null;
  if ('none' in u) return 'A shell runs no model: no tokens, no cost.';
  const t = u.total;
  if (t.responses === 0) return null;
  const tokens = t.input + t.output + t.cacheRead + t.cacheWrite;
  // What the agent itself says it cost (opencode reports its own), beside ours from the price table.
  const own = t.agentUsd !== undefined ? ` (the agent says ${moneyWords({ usd: t.agentUsd, unpriced: [] })})` : '';
  const line = `${moneyWords(t)}${own} · ${n(tokens)} tokens (${n(t.input)} in, ${n(t.output)} out, ${n(t.cacheRead)} from cache, ${n(t.cacheWrite)} to cache) · ${t.responses} ${t.responses === 1 ? 'reply' : 'replies'} · ${u.turns} ${u.turns === 1 ? 'turn' : 'turns'}`;
  const entries = Object.entries(u.byModel);
  const models = entries.length > 1 ? entries.map(([m, x]) => `${m}: ${moneyWords(x)}, ${n(x.input + x.output + x.cacheRead + x.cacheWrite)} tokens`) : [];
  const c = u.context;
  const context = c
    ? {
        text: c.window ? `${c.percent}% of ${c.model}'s ${n(c.window)}-token context in use (${n(c.used)} tokens)` : `${n(c.used)} tokens of context in use (${c.model}'s window is unknown)`,
        percent: c.percent,
        warn: c.nearLimit ? 'Near the limit: the agent will soon compact its conversation or stop.' : null,
      }
    : null;
  return { line, models, context };
}

/** A session in a list: `$0.42 · context 45%`, with a warning mark near the limit. */
export function costChip(c: SessionCost | undefined): { text: string; warn: boolean } | null {
  if (!c) return null;
  return { text: `${moneyWords(c)}${c.contextPercent !== null ? ` · context ${c.contextPercent}%` : ''}`, warn: c.nearLimit };
}

/** An issue's cost: the sum over the sessions that worked on it, or null when none recorded any. */
export function issueCostWords(sessions: readonly { readonly issue: string | null; readonly cost?: SessionCost }[], issue: string): string | null {
  const costs = sessions.filter((s) => s.issue === issue && s.cost).map((s) => s.cost!);
  if (!costs.length) return null;
  const usd = costs.reduce((a, c) => a + c.usd, 0);
  const tokens = costs.reduce((a, c) => a + c.tokens, 0);
  const unpriced = [...new Set(costs.flatMap((c) => c.unpriced))].sort();
  return `The work on this issue cost ${moneyWords({ usd, unpriced })} so far: ${n(tokens)} tokens over ${costs.length} ${costs.length === 1 ? 'session' : 'sessions'}.`;
}

/** A period's spend: dollars as above, `$0.00` when nothing answered in it. */
export const spentWords = (t: Pick<TokenTotals, 'usd' | 'unpriced' | 'responses'>): string => (t.responses === 0 ? '$0.00' : moneyWords(t));

/** Dollars of a budget (a setting, never unpriced): `$5.00`, `$0.80`; a finer one as written (`$0.0222`). */
export const budgetWords = budgetDollars;

/** Whether today's spend has reached the daily budget (the same test as the hook's: at or above it). */
export const dayBudgetReached = (s: Pick<ProjectSpend, 'today' | 'budgetUsdPerDay'>): boolean => s.budgetUsdPerDay !== null && s.today.usd >= s.budgetUsdPerDay;

/**
 * The spawn form's line: what the project has spent today, against its daily budget when one is set, and,
 * once that is reached, what happens to a session spawned now (the hook stops it at its first reply).
 */
export function spawnSpendWords(s: ProjectSpend): { readonly text: string; readonly wait: string | null } {
  const today = spentWords(s.today);
  if (s.budgetUsdPerDay === null) return { text: `The project has spent ${today} today (UTC).`, wait: null };
  const text = `The project has spent ${today} of its ${budgetWords(s.budgetUsdPerDay)} daily budget today (UTC).`;
  if (!dayBudgetReached(s)) return { text, wait: null };
  return {
    text,
    wait: "Today's budget is used up: an agent session spawned now is stopped at its first reply and waits until someone raises the daily budget (sessions.budgetUsdPerDay in trellis.json) and resumes it, or resumes it tomorrow (the day starts at 00:00 UTC). A shell session runs no model and is not stopped.",
  };
}

/** A sum of periods' spend: dollars, responses and every unpriced model once. */
const sumSpend = (xs: readonly Pick<TokenTotals, 'usd' | 'unpriced' | 'responses'>[]) => ({
  usd: xs.reduce((a, x) => a + x.usd, 0),
  responses: xs.reduce((a, x) => a + x.responses, 0),
  unpriced: [...new Set(xs.flatMap((x) => x.unpriced))].sort(),
});

/**
 * The host home's total: what this machine's projects spent today and this week (the projects of other
 * hosts are theirs), and which of its projects could not be counted (offline: no backend to ask).
 */
export function hostSpendWords(rows: readonly Pick<ProjectRow, 'host' | 'online' | 'spend' | 'name'>[]): { today: string; week: string; counted: number; uncounted: string | null } | null {
  const mine = rows.filter((r) => !r.host);
  const counted = mine.filter((r) => r.spend);
  if (!counted.length) return null;
  const missing = mine.filter((r) => !r.spend).map((r) => r.name);
  return {
    today: spentWords(sumSpend(counted.map((r) => r.spend!.today))),
    week: spentWords(sumSpend(counted.map((r) => r.spend!.week))),
    counted: counted.length,
    uncounted: missing.length ? `Not counted: ${missing.join(', ')} (${missing.length === 1 ? 'its backend is' : 'their backends are'} not running).` : null,
  };
}

/** A project's row on the host home: `spent $0.82 of $0.80 today · $1.12 this week`, flagged once the day's budget is reached. */
export function rowSpendWords(spend: NonNullable<ProjectRow['spend']>): { text: string; over: boolean } {
  const budget = spend.budgetUsdPerDay ?? null;
  return {
    text: `spent ${spentWords(spend.today)}${budget !== null ? ` of ${budgetWords(budget)}` : ''} today · ${spentWords(spend.week)} this week`,
    over: dayBudgetReached({ today: spend.today, budgetUsdPerDay: budget }),
  };
}
