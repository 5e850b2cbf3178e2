/**
 * What a session's (or an issue's) model use cost, in words for people (issue 42): the dollars (or that the
 * price is unknown, naming the model), the tokens, the replies and turns, and how full the agent's context is.
 * Pure, so the words are tested without a browser.
 */
import type { SessionCost, TokenTotals, UsageView } from '../../projections/index.js';

const n = (x: number): string => x.toLocaleString('en-US');

/** Dollars as people read them, or why there are none. */
export function moneyWords(t: Pick<TokenTotals, 'usd' | 'unpriced'>): string {
  const money = t.usd >= 1 ? `$${t.usd.toFixed(2)}` : `$${t.usd.toFixed(4)}`;
  if (t.unpriced.length && t.usd === 0) return `price unknown (${t.unpriced.join(', ')})`;
  return t.unpriced.length ? `${money} + price unknown (${t.unpriced.join(', ')})` : money;
}

export interface CostWords {
  /** The headline: `$0.0123 · 12,345 tokens · 3 replies · 2 turns`. */
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

/** A session in a list: `$0.0123 · ctx 45%`, with a warning mark near the limit. */
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
