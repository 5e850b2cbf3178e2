/**
 * Reads the agent's own usage record when one of its signals arrives and appends what is new to the
 * session's stream (issue 42): Claude Code's transcript (its path in every hook payload), Codex's rollout
 * (found by the conversation's thread id). Cheap by construction: only the bytes after the offset the
 * stream already recorded are read, and a read that finds no response appends nothing.
 */
import { readdir } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join } from 'node:path';
import type { UsageContext } from '../../../events/index.js';
import type { SessionState } from '../../../projections/index.js';
import { codexHome } from '../agents/agent-homes.js';
import type { SessionLogProject as Project } from '../log/sessions-project.js';
import { claudeUsage, codexUsage, newLines } from './usage-read.js';
import { priceEntries } from './usage-price.js';
import { appendCommand } from '../log/session-append.js';
import type { BareCommand } from '../log/session-runtime.js';

const obj = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/**
 * Claude Code's transcript path from a hook payload, when it has the transcript's own shape:
 * `<config>/projects/<encoded cwd>/<session id>.jsonl` of the session's own agent conversation. The payload is
 * the agent's (untrusted): any other path (a file of the user's, a device) is never opened.
 */
export function claudeTranscript(payload: unknown, state: SessionState): string | null {
  const p = obj(payload);
  const path = typeof p.transcript_path === 'string' ? p.transcript_path : null;
  const session = typeof p.session_id === 'string' ? p.session_id : state.agentSessionId;
  // The session's own conversation only (its SessionStart identified it before this read; /clear identifies the next).
  if (state.agentSessionId && session !== state.agentSessionId) return null;
  if (!path || !session || !/^[A-Za-z0-9-]{8,80}$/.test(session) || !isAbsolute(path) || path.includes('\0')) return null;
  if (basename(path) !== `${session}.jsonl` || basename(dirname(dirname(path))) !== 'projects') return null;
  return path;
}

/** Codex's rollout of conversation `thread` (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread>.jsonl`), or null. */
async function codexRollout(thread: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  if (!/^[A-Za-z0-9-]{8,80}$/.test(thread)) return null;
  const suffix = `-${thread}.jsonl`;
  const find = async (dir: string, depth: number): Promise<string | null> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of entries.sort((a, b) => (a.name < b.name ? 1 : -1))) {
      if (depth === 0 && e.isFile() && e.name.startsWith('rollout-') && e.name.endsWith(suffix)) return join(dir, e.name);
      if (depth > 0 && e.isDirectory()) {
        const found = await find(join(dir, e.name), depth - 1);
        if (found) return found;
      }
    }
    return null;
  };
  return find(join(codexHome(env), 'sessions'), 3);
}

/** The record a signal of this session points at: its path and whose, or null (a shell, a payload without one). */
async function recordOf(state: SessionState, payload: unknown, env: NodeJS.ProcessEnv): Promise<{ file: string; source: 'claude' | 'codex' } | null> {
  if (state.harness === 'claude') {
    const file = claudeTranscript(payload, state);
    return file ? { file, source: 'claude' } : null;
  }
  if (state.harness === 'codex') {
    const thread = typeof obj(payload)['thread-id'] === 'string' ? (obj(payload)['thread-id'] as string) : state.agentSessionId;
    if (!thread || (state.agentSessionId && thread !== state.agentSessionId)) return null;
    // Known from an earlier read: no directory walk.
    const known = Object.keys(state.usageRead ?? {}).find((f) => f.endsWith(`-${thread}.jsonl`));
    const file = known ?? (await codexRollout(thread, env));
    return file ? { file, source: 'codex' } : null;
  }
  return null;
}

type RecordUsage = BareCommand & { type: 'record-usage' };
/**
 * A reading of the agent's usage records: the commands that append what is new, one per record (none:
 * nothing new; opencode's sub-agents each have a record of their own), or why they could not be read.
 */
export type UsageReading = { readonly commands: readonly RecordUsage[]; readonly problem: string | null };
const nothing: UsageReading = { commands: [], problem: null };

/**
 * Reads what is new in the session's usage record for a signal with `payload`: the `record-usage` command
 * that appends it, for the caller to append with the signal's own transitions in one write (signal-verb.ts:
 * one compare-and-swap per hook, not two). Its `from` makes it exactly-once: a reader that decides it after
 * another appended these bytes appends nothing. Never throws (a hook must not fail on it).
 */
export async function readUsage(state: SessionState, payload: unknown, env: NodeJS.ProcessEnv = process.env, event = ''): Promise<UsageReading> {
  try {
    if (state.harness === 'opencode') return OPENCODE_READS.has(event) ? await readOpencode(state, env) : nothing;
    const record = await recordOf(state, payload, env);
    if (!record) return nothing;
    const from = state.usageRead?.[record.file] ?? 0;
    const read = await newLines(record.file, from).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return null;
      throw err;
    });
    if (!read) return nothing;
    const found = record.source === 'claude' ? claudeUsage(read.lines) : codexUsage(read.lines, basename(record.file), countedOf(state, record.file), state.usage?.context?.model ?? null);
    // Nothing a person would see (attachments, a tool's output): no commit; these bytes are read again with the next response.
    if (found.entries.length === 0 && found.turns === 0) return nothing;
    const { entries, windows } = await priceEntries(record.source, found.entries);
    const context: UsageContext | null = found.context && found.context.window === null ? { ...found.context, window: windows.get(found.context.model) ?? null } : found.context;
    return { commands: [{ type: 'record-usage', agent: record.source, file: record.file, from, to: read.to, entries, turns: found.turns, context }], problem: null };
  } catch (err) {
    return { commands: [], problem: `usage: the agent's usage record could not be read (${(err as Error).message})` };
  }
}

/** The opencode events after which its server is asked for the conversation's messages: a turn's end or a wait, not every step. */
const OPENCODE_READS = new Set(['session.idle', 'session.error', 'permission.asked', 'question.asked']);

/** readUsage for opencode: what its server says, priced by the table, its own cost kept beside; a command per record with anything new. */
async function readOpencode(state: SessionState, env: NodeJS.ProcessEnv): Promise<UsageReading> {
  // Loaded for an opencode session only: it reaches opencode's server client (issue 40: the hook loads one agent's code).
  const { opencodeUsage } = await import('./usage-opencode.js');
  const commands: RecordUsage[] = [];
  for (const found of await opencodeUsage(state, env)) {
    if (found.entries.length === 0 && found.turns === 0) continue;
    const { entries, windows } = await priceEntries('opencode', found.entries);
    const context = found.context ? { ...found.context, window: windows.get(found.context.model) ?? null } : null;
    commands.push({ type: 'record-usage', agent: 'opencode', file: found.file, from: state.usageRead?.[found.file] ?? 0, to: found.to, entries, turns: found.turns, context });
  }
  return { commands, problem: null };
}

/** readUsage, appended on its own (a reader with no transition of its own to append beside it). */
export async function recordUsage(p: Project, state: SessionState, payload: unknown, env: NodeJS.ProcessEnv = process.env): Promise<string | null> {
  const reading = await readUsage(state, payload, env);
  if (!reading.commands.length) return reading.problem;
  try {
    for (const command of reading.commands) await appendCommand(p, state.id, command, state.id, 'hook');
    return null;
  } catch (err) {
    return `usage: the agent's usage could not be recorded (${(err as Error).message})`;
  }
}

/** What a Codex rollout's entries already add up to (its cumulative total so far). */
function countedOf(state: SessionState, file: string): { input: number; output: number; cacheRead: number; cacheWrite: number } {
  const b = state.usage?.byFile?.[file];
  return { input: b?.input ?? 0, output: b?.output ?? 0, cacheRead: b?.cacheRead ?? 0, cacheWrite: b?.cacheWrite ?? 0 };
}
