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

const SESSION_ID = /^[A-Za-z0-9_-]{4,120}$/;
/** How deep sub-agents of sub-agents are followed (opencode's `general` agent may call `task` again). */
const DEPTH = 3;

/**
 * What opencode's server says is new for the session's conversation since each record's `from`: its
 * sub-agents' conversations first (the `task` tool runs each in a child session, `GET /session/:id/children`,
 * whose messages are not in the parent's), each a record of its own, so each is counted once; then the
 * conversation's own, last, so its context is the one in use. Empty: nothing new, or no server.
 */
export async function opencodeUsage(state: SessionState, env: NodeJS.ProcessEnv): Promise<OpencodeRead[]> {
  const sid = state.agentSessionId;
  const endpoint = readEndpoint(state, env);
  if (!sid || !endpoint || !SESSION_ID.test(sid)) return [];
  const reads: OpencodeRead[] = [];
  const read = async (id: string, depth: number): Promise<void> => {
    if (depth < DEPTH) {
      const children = await opencodeCall(endpoint, 'GET', `/session/${id}/children`);
      const ids = (Array.isArray(children) ? children : []).map((c) => obj(c).id).filter((c): c is string => typeof c === 'string' && SESSION_ID.test(c));
      for (const child of ids) await read(child, depth + 1);
    }
    const file = opencodeRecord(id);
    const answer = await opencodeCall(endpoint, 'GET', `/session/${id}/message`);
    const found = opencodeMessagesUsage((Array.isArray(answer) ? answer : []).map((m) => obj(obj(m).info)), state.usageRead?.[file] ?? 0);
    // A sub-agent's prompt is the parent agent's, not a person's turn; its context is not the conversation's.
    if (found) reads.push({ file, ...found, ...(depth > 0 ? { turns: 0, context: null } : {}) });
  };
  await read(sid, 0);
  return reads;
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
      // opencode 1.18.33 takes the provider's output apart (its getUsage: `output` = output tokens minus
      // reasoning, `input` = input tokens minus cache reads and writes): reasoning is output the model was
      // paid for (Claude Code's output counts its thinking too), so the provider's output is the two summed.
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
