import { isObject, type Check } from './stored-json.js';

/**
 * What one read of an agent's own usage record found (issue 42): the tokens of each model response, the
 * user turns and the context in use, read from `from` to `to` (byte offsets) of `file`, the agent's
 * transcript (Claude Code) or rollout (Codex). Appended to the session's stream so the figures outlive the
 * agent's own cleanup and travel with `trellis sync`.
 */
export interface UsageData {
  /**
   * Whose record: `claude` (a transcript's assistant lines), `codex` (a rollout's token_count totals) or
   * `opencode` (its server's messages of the conversation).
   */
  readonly agent: 'claude' | 'codex' | 'opencode';
  /** The record's path, as the agent named it; opencode: `opencode:<its session id>`. */
  readonly file: string;
  /**
   * The byte offset the read started at: the state's offset for `file`, or the read is stale (another reader
   * took these bytes). opencode: how many of the conversation's answered messages were read before.
   */
  readonly from: number;
  /** The byte offset after the last whole line read (opencode: the answered messages read so far). */
  readonly to: number;
  /** Each response's tokens, by key; a key seen before replaces the earlier figure (a streamed message's final usage). */
  readonly entries: readonly UsageEntry[];
  /** User turns begun in these bytes. */
  readonly turns: number;
  /** The context in use after the latest response of the main conversation, when these bytes had one. */
  readonly context: UsageContext | null;
}

/** One model response's tokens (Anthropic's split: `input` excludes cache reads and writes) and its price at the time of use. */
export interface UsageEntry {
  /** Claude Code: the message id; Codex: the rollout and its cumulative total (one key per total reached). */
  readonly key: string;
  readonly model: string;
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  /** US dollars by the price table at the time of use, or null: the table has no price for the model. */
  readonly usd: number | null;
  /** Which price table priced it (`@pydantic/genai-prices@<version>`), or null when unpriced. */
  readonly priced: string | null;
  /** What the agent itself says the response cost, in US dollars (opencode's own `cost`), when it says. */
  readonly agentUsd?: number;
}

export interface UsageContext {
  readonly model: string;
  /** Tokens of the conversation the model last saw (input, cache and the answer). */
  readonly used: number;
  /** The model's context window, or null when neither the agent nor the price table says it. */
  readonly window: number | null;
}

const count: Check = (v) => Number.isInteger(v) && (v as number) >= 0;
const name: Check = (v) => typeof v === 'string' && v !== '';
const dollars: Check = (v) => typeof v === 'number' && Number.isFinite(v) && v >= 0;

function isEntry(v: unknown): boolean {
  if (!isObject(v)) return false;
  return (
    name(v.key) && name(v.model) && count(v.input) && count(v.output) && count(v.cacheRead) && count(v.cacheWrite) &&
    (v.usd === null || dollars(v.usd)) && (v.priced === null || name(v.priced)) && (v.agentUsd === undefined || dollars(v.agentUsd))
  );
}

function isContext(v: unknown): boolean {
  return v === null || (isObject(v) && name(v.model) && count(v.used) && (v.window === null || count(v.window)));
}

/** The checks of a `usage` event's data, field by field (session-events.ts's table). */
export const USAGE_DATA: Record<keyof UsageData, Check> = {
  agent: (v) => v === 'claude' || v === 'codex' || v === 'opencode',
  file: name,
  from: count,
  to: count,
  entries: (v) => Array.isArray(v) && v.every(isEntry),
  turns: count,
  context: isContext,
};
