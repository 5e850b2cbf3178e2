import type { SessionEvent, UsageContext, UsageEntry } from '../events/index.js';

/** A response's figures as folded: its tokens and price, and when it was recorded (for `--by day` and `--since`). */
export interface FoldedEntry extends Omit<UsageEntry, 'key'> {
  readonly at: string;
}

/** The fold of a session's `usage` events: each response once (by key, the latest figure), turns, context, read offsets. */
export interface SessionUsage {
  readonly entries: Readonly<Record<string, FoldedEntry>>;
  readonly turns: number;
  readonly context: UsageContext | null;
  /** Bytes read so far of each record, by path. */
  readonly read: Readonly<Record<string, number>>;
}

export const emptyUsage: SessionUsage = { entries: {}, turns: 0, context: null, read: {} };

/** Folds one `usage` event: a response already counted (a streamed message's earlier line, a replay) is replaced, never added. */
export function evolveUsage(usage: SessionUsage, event: Extract<SessionEvent, { type: 'usage' }>): SessionUsage {
  const d = event.data;
  const entries: Record<string, FoldedEntry> = { ...usage.entries };
  for (const { key, ...rest } of d.entries) entries[key] = { ...rest, at: event.at };
  return { entries, turns: usage.turns + d.turns, context: d.context ?? usage.context, read: { ...usage.read, [d.file]: d.to } };
}

export interface TokenTotals {
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  /** Responses counted. */
  readonly responses: number;
  /** US dollars of the priced responses. */
  readonly usd: number;
  /** Models the price table has no price for (their tokens are counted, their cost is unknown). */
  readonly unpriced: readonly string[];
}

export const zeroTotals: TokenTotals = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, responses: 0, usd: 0, unpriced: [] };

/** Adds one response (or another total) to a total. */
export function addTotals(a: TokenTotals, b: Omit<FoldedEntry, 'at' | 'priced'> | TokenTotals): TokenTotals {
  const unpriced = 'unpriced' in b ? b.unpriced : b.usd === null ? [b.model] : [];
  return {
    input: a.input + b.input,
    output: a.output + b.output,
    cacheRead: a.cacheRead + b.cacheRead,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    responses: a.responses + ('responses' in b ? b.responses : 1),
    usd: a.usd + (b.usd ?? 0),
    unpriced: [...new Set([...a.unpriced, ...unpriced])].sort(),
  };
}

/** Context use at or above this share of the window is flagged (the agent compacts or fails soon). */
export const CONTEXT_WARN = 0.8;

/** What a session's view says of its usage: totals, per model, turns, context in use; or why it has none. */
export type UsageView =
  | {
      readonly total: TokenTotals;
      readonly byModel: Readonly<Record<string, TokenTotals>>;
      readonly turns: number;
      readonly context: (UsageContext & { readonly percent: number | null; readonly nearLimit: boolean }) | null;
    }
  | { readonly none: string };

/** The usage a session's view shows. A shell runs no model: it says so rather than showing zeros. */
export function usageView(harness: string, usage: SessionUsage | undefined): UsageView {
  if (harness === 'shell') return { none: 'a shell session runs no model: it has no token usage or cost' };
  const u = usage ?? emptyUsage;
  let total = zeroTotals;
  const byModel: Record<string, TokenTotals> = {};
  for (const e of Object.values(u.entries)) {
    total = addTotals(total, e);
    byModel[e.model] = addTotals(byModel[e.model] ?? zeroTotals, e);
  }
  const c = u.context;
  const percent = c && c.window ? Math.round((c.used / c.window) * 1000) / 10 : null;
  return { total, byModel, turns: u.turns, context: c ? { ...c, percent, nearLimit: percent !== null && percent >= CONTEXT_WARN * 100 } : null };
}

/** Money as people read it: `$0.0123`, `$1.23`; with a note when part of it is unpriced. */
export function usdText(t: Pick<TokenTotals, 'usd' | 'unpriced' | 'responses'>): string {
  if (t.responses > 0 && t.usd === 0 && t.unpriced.length > 0) return `unknown price (${t.unpriced.join(', ')})`;
  const money = t.usd >= 1 ? `$${t.usd.toFixed(2)}` : `$${t.usd.toFixed(4)}`;
  return t.unpriced.length ? `${money} + unknown price (${t.unpriced.join(', ')})` : money;
}
