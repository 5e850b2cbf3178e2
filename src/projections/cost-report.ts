import { TrellisError } from '../events/index.js';
import type { SessionState } from './session.js';
import { budgetDollars } from './money.js';
import { addTotals, agentUsdText, usageBuckets, usdText, zeroTotals, type TokenTotals } from './session-usage.js';
import { weekStart, type ProjectSpend } from './spend-periods.js';

/** How `trellis cost` groups: by session, by the issue it worked on, by node, by the day (UTC) of use. */
export const COST_GROUPS = ['session', 'issue', 'node', 'day'] as const;
export type CostGroup = (typeof COST_GROUPS)[number];

export interface CostRow extends TokenTotals {
  /** The session id, issue id, node name or day (`YYYY-MM-DD`); `(none)` for sessions with no issue or node. */
  readonly key: string;
  /** A session's title (by session). */
  readonly title?: string;
  /** Sessions with usage in this row. */
  readonly sessions: number;
}

export interface CostReport {
  readonly by: CostGroup;
  /** The earliest use counted (ISO; counted by the hour it falls in), or null: all of it. */
  readonly since: string | null;
  /** Highest cost first (by day: oldest day first). */
  readonly rows: readonly CostRow[];
  /** Every response counted once (a session of several nodes is in several node rows, once here). */
  readonly total: TokenTotals;
  /** Sessions with no model usage by nature (shells), left out. */
  readonly shells: number;
  /** Today's and this week's spend (UTC) and the daily budget, whatever `by` and `since` (spend-periods.ts). */
  readonly spend?: ProjectSpend;
}

/**
 * `--since`: an ISO date or instant (`2026-11-01`, `2026-11-27T08:00Z`), or a span back from now (`7d`,
 * `12h`, `today`, `week`: since Monday 00:00 UTC). Anything else is refused, naming what is accepted.
 */
export function parseSince(since: string | undefined, now: Date): string | null {
  if (since === undefined || since === '') return null;
  if (since === 'today') return `${now.toISOString().slice(0, 10)}T00:00:00.000Z`;
  if (since === 'week') return weekStart(now);
  const span = /^(\d{1,4})([dh])$/.exec(since);
  if (span) return new Date(now.getTime() - Number(span[1]) * (span[2] === 'd' ? 86_400_000 : 3_600_000)).toISOString();
  if (/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(since) && !Number.isNaN(Date.parse(since))) return new Date(Date.parse(since)).toISOString();
  throw new TrellisError('INVALID_INPUT', `--since ${JSON.stringify(since)} is not a date (2026-11-01), an instant (2026-11-27T08:00Z), a span back from now (7d, 12h), 'today' or 'week' (since Monday)`);
}

/** Groups every session's recorded responses (since `since`) as `by` says. */
export function costReport(states: readonly SessionState[], by: CostGroup, since: string | null): CostReport {
  if (!COST_GROUPS.includes(by)) throw new TrellisError('INVALID_INPUT', `--by ${JSON.stringify(by)} is not one of ${COST_GROUPS.join(', ')}`);
  const rows = new Map<string, { totals: TokenTotals; title?: string; sessions: Set<string> }>();
  let total = zeroTotals;
  let shells = 0;
  for (const s of states) {
    if (s.status === 'absent') continue;
    if (s.harness === 'shell') {
      shells++;
      continue;
    }
    for (const e of usageBuckets(s.usage, since)) {
      total = addTotals(total, e);
      const keys = by === 'session' ? [s.id] : by === 'issue' ? [s.issue ?? '(none)'] : by === 'node' ? (s.nodes.length ? s.nodes : ['(none)']) : [e.hour.slice(0, 10)];
      for (const key of keys) {
        const row = rows.get(key) ?? { totals: zeroTotals, ...(by === 'session' ? { title: s.title } : {}), sessions: new Set<string>() };
        row.totals = addTotals(row.totals, e);
        row.sessions.add(s.id);
        rows.set(key, row);
      }
    }
  }
  const list: CostRow[] = [...rows].map(([key, r]) => ({ key, ...(r.title !== undefined ? { title: r.title } : {}), sessions: r.sessions.size, ...r.totals }));
  list.sort(by === 'day' ? (a, b) => (a.key < b.key ? -1 : 1) : (a, b) => b.usd - a.usd || tokens(b) - tokens(a) || (a.key < b.key ? -1 : 1));
  return { by, since, rows: list, total, shells };
}

export const tokens = (t: Pick<TokenTotals, 'input' | 'output' | 'cacheRead' | 'cacheWrite'>): number => t.input + t.output + t.cacheRead + t.cacheWrite;

/** The report as text: one line per row, then the total. */
export function costLines(r: CostReport): string {
  const line = (label: string, t: TokenTotals) =>
    `${label.padEnd(24)} ${usdText(t).padStart(12)}  ${String(tokens(t)).padStart(10)} tokens (in ${t.input}, out ${t.output}, cache read ${t.cacheRead}, cache write ${t.cacheWrite}), ${t.responses} response(s)${agentUsdText(t) ? ` (${agentUsdText(t)})` : ''}`;
  const out = r.rows.map((row) => line(row.title ? `${row.key} ${row.title.slice(0, 24 - row.key.length - 1)}` : row.key, row));
  if (out.length === 0) out.push(`no model usage recorded${r.since ? ` since ${r.since}` : ''}`);
  out.push(line('total', r.total));
  if (r.shells) out.push(`(${r.shells} shell session(s) run no model: no cost)`);
  if (r.spend) {
    const { today, week, budgetUsdPerDay } = r.spend;
    out.push(`spent today ${usdText(today)}${budgetUsdPerDay !== null ? ` of ${budgetDollars(budgetUsdPerDay)} (sessions.budgetUsdPerDay)` : ''}, this week (since Monday, UTC) ${usdText(week)}`);
  }
  return `${out.join('\n')}\n`;
}
