import type { SessionEvent, UsageContext, UsageEntry } from '../events/index.js';
import { dollars } from './money.js';

/** A response's figures as folded: its tokens and price, and when it was recorded. */
export interface FoldedEntry extends Omit<UsageEntry, 'key'> {
  readonly at: string;
}

/** One model's use in one hour: tokens, responses, dollars of the priced ones, and how many were unpriced. */
export interface UsageBucket {
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  readonly responses: number;
  readonly usd: number;
  readonly unpriced: number;
  /** What the agent itself said these responses cost (opencode), when it said it for any. */
  readonly agentUsd?: number;
}

/**
 * The fold of a session's `usage` events, bounded whatever the session's length: its use per hour (UTC,
 * `YYYY-MM-DDTHH`) and model, and the latest RECENT responses by key, so a response seen again (the rest of
 * a streamed message in the next read, a sidechain's replay) replaces its figure instead of adding to it.
 * The events themselves stay the whole ledger, response by response.
 */
export interface SessionUsage {
  readonly hours: Readonly<Record<string, Readonly<Record<string, UsageBucket>>>>;
  readonly recent: Readonly<Record<string, FoldedEntry>>;
  readonly turns: number;
  readonly context: UsageContext | null;
  /** Bytes read so far of each record, by path. */
  readonly read: Readonly<Record<string, number>>;
  /** What each record's responses add up to, by path (a Codex rollout's cumulative total so far). */
  readonly byFile: Readonly<Record<string, UsageBucket>>;
}

/** How many of the latest responses are kept by key for replacement (a replay from further back would count again). */
export const RECENT = 512;

export const emptyUsage: SessionUsage = { hours: {}, recent: {}, turns: 0, context: null, read: {}, byFile: {} };

const zeroBucket: UsageBucket = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, responses: 0, usd: 0, unpriced: 0 };

/** A bucket with a response added (sign 1) or taken out (sign -1). */
function shift(b: UsageBucket, e: FoldedEntry, sign: 1 | -1): UsageBucket {
  return {
    input: b.input + sign * e.input,
    output: b.output + sign * e.output,
    cacheRead: b.cacheRead + sign * e.cacheRead,
    cacheWrite: b.cacheWrite + sign * e.cacheWrite,
    responses: b.responses + sign,
    usd: b.usd + sign * (e.usd ?? 0),
    unpriced: b.unpriced + (e.usd === null ? sign : 0),
    ...(b.agentUsd !== undefined || e.agentUsd !== undefined ? { agentUsd: (b.agentUsd ?? 0) + sign * (e.agentUsd ?? 0) } : {}),
  };
}

/** Folds one `usage` event: a response already counted (a streamed message's earlier line, a replay) is replaced, never added. */
export function evolveUsage(usage: SessionUsage, event: Extract<SessionEvent, { type: 'usage' }>): SessionUsage {
  const d = event.data;
  const hours: Record<string, Record<string, UsageBucket>> = { ...usage.hours };
  const recent: Record<string, FoldedEntry> = { ...usage.recent };
  let file = usage.byFile?.[d.file] ?? zeroBucket;
  const touch = (e: FoldedEntry, sign: 1 | -1) => {
    const hour = e.at.slice(0, 13);
    const models = (hours[hour] = { ...(hours[hour] ?? {}) });
    models[e.model] = shift(models[e.model] ?? zeroBucket, e, sign);
    file = shift(file, e, sign);
  };
  for (const { key, ...rest } of d.entries) {
    const entry: FoldedEntry = { ...rest, at: event.at };
    const before = recent[key];
    if (before) {
      touch(before, -1);
      delete recent[key];
    }
    touch(entry, 1);
    recent[key] = entry;
  }
  const keys = Object.keys(recent);
  for (const key of keys.slice(0, Math.max(0, keys.length - RECENT))) delete recent[key];
  return { hours, recent, turns: usage.turns + d.turns, context: d.context ?? usage.context, read: { ...usage.read, [d.file]: d.to }, byFile: { ...usage.byFile, [d.file]: file } };
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
  /** What the agent itself said it cost (opencode reports its own), beside ours from the price table. */
  readonly agentUsd?: number;
}

export const zeroTotals: TokenTotals = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, responses: 0, usd: 0, unpriced: [] };

/** Adds one model's bucket (or another total) to a total. */
export function addTotals(a: TokenTotals, b: TokenTotals | (UsageBucket & { readonly model: string })): TokenTotals {
  const unpriced = Array.isArray(b.unpriced) ? b.unpriced : (b.unpriced as number) > 0 ? [(b as { model: string }).model] : [];
  return {
    input: a.input + b.input,
    output: a.output + b.output,
    cacheRead: a.cacheRead + b.cacheRead,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    responses: a.responses + b.responses,
    usd: a.usd + b.usd,
    unpriced: unpriced.length ? [...new Set([...a.unpriced, ...unpriced])].sort() : a.unpriced,
    ...(a.agentUsd !== undefined || b.agentUsd !== undefined ? { agentUsd: (a.agentUsd ?? 0) + (b.agentUsd ?? 0) } : {}),
  };
}

/** Every bucket of a session's usage from hour `since` on (null: all), with its hour and model. */
export function* usageBuckets(usage: SessionUsage | undefined, since: string | null = null): Generator<UsageBucket & { readonly hour: string; readonly model: string }> {
  const from = since?.slice(0, 13) ?? null;
  for (const [hour, models] of Object.entries((usage ?? emptyUsage).hours)) {
    if (from && hour < from) continue;
    for (const [model, b] of Object.entries(models)) if (b.responses > 0) yield { ...b, hour, model };
  }
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
  for (const b of usageBuckets(u)) {
    total = addTotals(total, b);
    byModel[b.model] = addTotals(byModel[b.model] ?? zeroTotals, b);
  }
  const c = u.context;
  const percent = c && c.window ? Math.round((c.used / c.window) * 1000) / 10 : null;
  return { total, byModel, turns: u.turns, context: c ? { ...c, percent, nearLimit: percent !== null && percent >= CONTEXT_WARN * 100 } : null };
}

/** Money as people read it (money.ts: `$0.42`, `< $0.01`); with a note when part of it is unpriced. */
export function usdText(t: Pick<TokenTotals, 'usd' | 'unpriced' | 'responses'>): string {
  if (t.responses > 0 && t.usd === 0 && t.unpriced.length > 0) return `unknown price (${t.unpriced.join(', ')})`;
  const money = dollars(t.usd);
  return t.unpriced.length ? `${money} + unknown price (${t.unpriced.join(', ')})` : money;
}

/** What the agent itself said it cost, for beside ours (`the agent says $0.42`), or null when it said nothing. */
export function agentUsdText(t: Pick<TokenTotals, 'agentUsd'>): string | null {
  if (t.agentUsd === undefined) return null;
  return `the agent says ${dollars(t.agentUsd)}`;
}
