import { open } from 'node:fs/promises';
import type { UsageContext, UsageEntry } from '../../../events/index.js';

/**
 * Reading an agent's own usage record incrementally (issue 42): only the bytes after `from`, up to the
 * last whole line, at most READ_LIMIT of them per call (a backlog is read over the next signals, never
 * all at once inside one hook). Only lines that can carry usage are parsed: a transcript's tool results
 * and file snapshots (most of its bytes) are skipped by a substring test.
 */
export const READ_LIMIT = 8 * 1024 * 1024;

/** One response's tokens before pricing (a UsageEntry without its price). */
export type RawEntry = Omit<UsageEntry, 'usd' | 'priced'> & {
  /** When the agent recorded it (its line's timestamp), for the price at that time. */
  readonly at: string | null;
};

export interface RawRead {
  readonly to: number;
  readonly entries: readonly RawEntry[];
  readonly turns: number;
  readonly context: UsageContext | null;
}

/** The whole lines of `file` after byte `from` (and the offset after them), or null when there is none new. */
export async function newLines(file: string, from: number): Promise<{ lines: string[]; to: number } | null> {
  const fh = await open(file, 'r');
  try {
    const { size } = await fh.stat();
    if (size <= from) return null;
    const length = Math.min(size - from, READ_LIMIT);
    const buf = Buffer.allocUnsafe(length);
    const { bytesRead } = await fh.read(buf, 0, length, from);
    const end = buf.lastIndexOf(0x0a, bytesRead - 1);
    if (end < 0) return null;
    return { lines: buf.subarray(0, end).toString('utf8').split('\n'), to: from + end + 1 };
  } finally {
    await fh.close();
  }
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.round(v) : 0);
const obj = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const parse = (line: string): Record<string, unknown> => {
  try {
    return obj(JSON.parse(line));
  } catch {
    return {};
  }
};

/**
 * A Claude Code transcript's new lines (checked against 2.1.197 and 2.1.332, test/agents/recordings/):
 * each assistant line carries `message.id`, `message.model` and `message.usage`. Lines of one message
 * repeat its id (one per content block while it streams, an early one with a placeholder output count):
 * the last line of an id is its figure, and the fold replaces an id's earlier figure, so a message is
 * counted once even when its lines straddle two reads, and a sidechain's replay of a parent's message
 * changes nothing. A user line with the person's own text (not a tool result, not Claude Code's own
 * meta lines) begins a turn. The context in use is the latest main-chain response's whole prompt and answer (its window
 * is the price table's, filled in by the caller).
 */
export function claudeUsage(lines: readonly string[]): Omit<RawRead, 'to'> {
  const byKey = new Map<string, RawEntry>();
  let turns = 0;
  let context: UsageContext | null = null;
  for (const line of lines) {
    if (line.includes('"type":"assistant"') && line.includes('"usage"')) {
      const d = parse(line);
      const m = obj(d.message);
      const u = obj(m.usage);
      const id = typeof m.id === 'string' ? m.id : null;
      const model = typeof m.model === 'string' ? m.model : null;
      // Claude Code's own synthetic messages (an API error shown as a reply) cost nothing.
      if (d.type !== 'assistant' || !id || !model || model === '<synthetic>') continue;
      const e: RawEntry = { key: id, model, input: num(u.input_tokens), output: num(u.output_tokens), cacheRead: num(u.cache_read_input_tokens), cacheWrite: num(u.cache_creation_input_tokens), at: typeof d.timestamp === 'string' ? d.timestamp : null };
      byKey.delete(id);
      byKey.set(id, e);
      if (d.isSidechain !== true) context = { model, used: e.input + e.cacheRead + e.cacheWrite + e.output, window: null };
    } else if (line.includes('"type":"user"') && !line.includes('"tool_result"')) {
      const d = parse(line);
      if (d.type !== 'user' || d.isSidechain === true || d.isMeta === true || d.isCompactSummary === true) continue;
      const content = obj(d.message).content;
      const text = typeof content === 'string' ? content : Array.isArray(content) ? content.map((b) => (obj(b).type === 'text' ? String(obj(b).text ?? '') : '')).join('') : '';
      // Slash commands and their output are Claude Code's own lines, not a turn of the model.
      if (text.trim() && !/^\s*<(command-|local-command-)/.test(text)) turns++;
    }
  }
  return { entries: [...byKey.values()], turns, context };
}

/**
 * A Codex rollout's new lines (checked against 0.169.0): `event_msg` lines of type `token_count` carry
 * the conversation's cumulative `total_token_usage` (input including cached input) and the model's
 * context window, `turn_context` lines the model, `task_started` a user turn. The latest total is the
 * figure: the entry is what it adds to `counted` (the totals this rollout already recorded), keyed by the
 * total reached, so a total read twice is one entry.
 */
export function codexUsage(lines: readonly string[], rollout: string, counted: { input: number; output: number; cacheRead: number; cacheWrite: number }, model: string | null): Omit<RawRead, 'to'> {
  let turns = 0;
  let latest: { total: Record<string, unknown>; last: Record<string, unknown>; window: number | null; at: string | null } | null = null;
  let current = model;
  for (const line of lines) {
    if (line.includes('"turn_context"')) {
      const p = obj(parse(line).payload);
      if (typeof p.model === 'string' && p.model) current = p.model;
    } else if (line.includes('"task_started"')) {
      if (obj(parse(line).payload).type === 'task_started') turns++;
    } else if (line.includes('"token_count"')) {
      const d = parse(line);
      const info = obj(obj(d.payload).info);
      if (!info.total_token_usage) continue;
      latest = { total: obj(info.total_token_usage), last: obj(info.last_token_usage), window: num(info.model_context_window) || null, at: typeof d.timestamp === 'string' ? d.timestamp : null };
    }
  }
  // No cumulative total yet (a turn that has started, its model named, nothing answered): nothing to record,
  // and these bytes are read again with the next one. Recording the turn alone moved the offset past its
  // turn_context line, so the answer read next had no model ("unknown"): Codex over its app-server reads at
  // turn/started, before any token_count is written.
  if (!latest) return { entries: [], turns: 0, context: null };
  const t = latest.total;
  const cacheRead = num(t.cached_input_tokens);
  const cacheWrite = num(t.cache_write_input_tokens);
  const now = { input: Math.max(0, num(t.input_tokens) - cacheRead - cacheWrite), output: num(t.output_tokens), cacheRead, cacheWrite };
  const name = current ?? 'unknown';
  const delta = { input: now.input - counted.input, output: now.output - counted.output, cacheRead: now.cacheRead - counted.cacheRead, cacheWrite: now.cacheWrite - counted.cacheWrite };
  const grew = Object.values(delta).some((n) => n > 0) && Object.values(delta).every((n) => n >= 0);
  const entries = grew ? [{ key: `codex:${rollout}:${num(t.total_tokens)}`, model: name, ...delta, at: latest.at }] : [];
  const used = num(latest.last.total_tokens) || num(latest.last.input_tokens) + num(latest.last.output_tokens);
  return { entries, turns, context: { model: name, used, window: latest.window } };
}
