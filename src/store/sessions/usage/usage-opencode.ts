/**
 * opencode's usage (issue 42), from its own server (the one the session's watcher reads): each message of
 * the conversation (`GET /session/:id/message`) carries its `tokens` (input, output, reasoning, cache
 * read and write) and the `cost` opencode itself computed. A message's figures are final once it is
 * completed, so the read takes the conversation's messages up to the first answer still being written and
 * records the ones after the count the stream already read (`from`/`to` count messages here, as they
 * count bytes of a transcript: the same exactly-once rule). Checked against opencode 1.18.33.
 */
import type { UsageContext } from '../../../events/index.js';
import type { SessionState } from '../../../projections/index.js';
import { opencodeCall, readEndpoint } from '../agents/opencode/opencode-server.js';
import type { RawEntry } from './usage-read.js';

const obj = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.round(v) : 0);

/** The name a conversation's usage is read under (`file` of its usage events). */
export const opencodeRecord = (agentSessionId: string): string => `opencode:${agentSessionId}`;

export interface OpencodeRead {
  readonly file: string;
  readonly to: number;
  readonly entries: readonly RawEntry[];
  readonly turns: number;
  readonly context: UsageContext | null;
}

/** What opencode's server says is new for the session's conversation since message `from`, or null (none, or no server). */
export async function opencodeUsage(state: SessionState, env: NodeJS.ProcessEnv): Promise<OpencodeRead | null> {
  const sid = state.agentSessionId;
  const endpoint = readEndpoint(state, env);
  if (!sid || !endpoint || !/^[A-Za-z0-9_-]{4,120}$/.test(sid)) return null;
  const file = opencodeRecord(sid);
  const from = state.usageRead?.[file] ?? 0;
  const answer = await opencodeCall(endpoint, 'GET', `/session/${sid}/message`);
  const read = opencodeMessagesUsage((Array.isArray(answer) ? answer : []).map((m) => obj(obj(m).info)), from);
  return read && { file, ...read };
}

/**
 * The usage of a conversation's messages (each message's `info`, oldest first) after the first `from`: up to
 * the first answer still being written, whose figures are not final yet; null when nothing is new.
 */
export function opencodeMessagesUsage(messages: readonly Record<string, unknown>[], from: number): Omit<OpencodeRead, 'file'> | null {
  let to = messages.findIndex((m) => m.role === 'assistant' && obj(m.time).completed === undefined);
  if (to < 0) to = messages.length;
  if (to <= from) return null;
  const entries: RawEntry[] = [];
  let turns = 0;
  let context: UsageContext | null = null;
  for (const m of messages.slice(from, to)) {
    if (m.role === 'user') turns++;
    if (m.role !== 'assistant' || typeof m.id !== 'string') continue;
    const t = obj(m.tokens);
    const cache = obj(t.cache);
    const model = typeof m.modelID === 'string' && m.modelID ? m.modelID : 'unknown';
    const completed = obj(m.time).completed;
    const entry = {
      key: m.id,
      model,
      input: num(t.input),
      // Reasoning is output the model was paid for (Claude Code's output counts its thinking too).
      output: num(t.output) + num(t.reasoning),
      cacheRead: num(cache.read),
      cacheWrite: num(cache.write),
      at: typeof completed === 'number' ? new Date(completed).toISOString() : null,
      ...(typeof m.cost === 'number' && Number.isFinite(m.cost) && m.cost >= 0 ? { agentUsd: m.cost } : {}),
    };
    entries.push(entry);
    const used = entry.input + entry.output + entry.cacheRead + entry.cacheWrite;
    // An answer aborted before the model said anything reports no tokens: the context is the last one that did.
    if (used > 0) context = { model, used, window: null };
  }
  return { to, entries, turns, context };
}
