import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { decideSession, isTrellisError, type SessionCommand } from '../../src/events/index.js';
import { evolveSession, initialSession, type SessionState } from '../../src/projections/session.js';
import type { HarnessAdapter } from '../../src/store/sessions/agents/adapter.js';
import { mapSignal } from '../../src/store/sessions/agents/signal.js';

/*
 * Replaying the recordings of the real programs (`test/agents/recordings/`) through an adapter's mapping
 * and the session's decide/evolve, as `trellis session signal` runs them: the adapter tables of every
 * agent and version share these.
 */

export const RECORDINGS = join(import.meta.dirname, '../agents/recordings');

/** A recording's lines, parsed (line 0 is its `_meta`). */
export const lines = (file: string): Record<string, unknown>[] =>
  readFileSync(join(RECORDINGS, file), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** A recorded screen, as captured. */
export const recordedScreen = (file: string): string => readFileSync(join(RECORDINGS, file), 'utf8');

const at = '2026-11-23T20:00:00.000Z';
let clockAt = 0;
const meta = (source: SessionCommand['source']) => ({ by: 'trellis', at: new Date(Date.parse(at) + ++clockAt).toISOString(), source });

/** A command without what `meta` adds, for each kind of command (Omit of a union keeps only shared fields). */
export type Bare<C> = C extends unknown ? Omit<C, 'by' | 'at' | 'source'> : never;

export function apply(state: SessionState, command: Bare<SessionCommand>, source: SessionCommand['source']): SessionState {
  return decideSession(state, { ...command, ...meta(source) } as SessionCommand).reduce(evolveSession, state);
}

/** A session of `harness` launched with `task`: spawned, started, launched (what the runtime logs: `starting` until the agent's first signal). */
export function launched(harness: string, task: string): SessionState {
  let s = apply(initialSession('s1'), { type: 'spawn', harness, task, nodes: [], issue: null, base: 'b'.repeat(40), branch: 'trellis/s1', worktree: '/w/s1' }, 'user');
  s = apply(s, { type: 'start' }, 'supervisor');
  s = apply(s, { type: 'launch', tmuxSession: 's1', pane: '%1', awaitsSignal: true }, 'supervisor');
  expect(s.status).toBe('starting');
  return s;
}

/** One hook call, as `signalSession` runs it: mapped by the adapter, each command decided; a refusal is ignored, not a crash. */
export function signal(adapter: HarnessAdapter, state: SessionState, event: string, payload: unknown): { state: SessionState; ignored: string[] } {
  const mapped = mapSignal(adapter, event, payload, state);
  if ('ignored' in mapped) return { state, ignored: [mapped.ignored] };
  const ignored: string[] = [];
  for (const command of mapped.commands) {
    try {
      state = apply(state, command, 'hook');
    } catch (err) {
      if (!(isTrellisError(err) && err.code === 'SESSION_REFUSED')) throw err;
      ignored.push(err.message);
    }
  }
  return { state, ignored };
}

export type Expect = Partial<Pick<SessionState, 'status' | 'reason' | 'source' | 'turnFailures' | 'agentSessionId' | 'waiting'>> & { detail?: string | RegExp | null; ignored?: boolean; refused?: boolean };

export const AWAIT = (reason: string, more: Expect = {}): Expect => ({ status: 'awaiting', reason, source: 'hook', ...more });
export const RUNNING: Expect = { status: 'running' };
export const EXITED: Expect = { status: 'interrupted', reason: 'process-exit', source: 'hook' };
/** A hook Trellis does not subscribe to: ignored with a reason, the state unchanged. */
export const NOT_SUBSCRIBED: Expect = { ignored: true };

export function check(state: SessionState, ignored: string[], want: Expect, where: string): void {
  const { detail, ignored: shouldIgnore, refused, ...fields } = want;
  expect(state, where).toMatchObject(fields);
  if (detail instanceof RegExp) expect(state.detail, where).toMatch(detail);
  else if (detail !== undefined) expect(state.detail, where).toBe(detail);
  if (shouldIgnore) expect(ignored.join('; '), where).toMatch(/^unknown signal/);
  else if (refused) expect(ignored.join('; '), where).toMatch(/^the session is interrupted/);
  else expect(ignored, where).toEqual([]);
}

/**
 * Replays a hook recording line by line (a startup is a fresh session Trellis launched), checking each
 * against `table`: the state after each line (1-based, `_meta` is 0).
 */
export function replayHooks(adapter: HarnessAdapter, harness: string, recorded: Record<string, unknown>[], table: Record<number, Expect>): void {
  let state: SessionState | null = null;
  recorded.slice(1).forEach((line, i) => {
    const n = i + 1;
    const payload = line.payload as Record<string, unknown>;
    const event = line.event as string;
    expect(payload.hook_event_name).toBe(event);
    if (event === 'SessionStart' && payload.source === 'startup') state = launched(harness, 'say hi');
    const r = signal(adapter, state!, event, payload);
    state = r.state;
    check(state, r.ignored, table[n]!, `line ${n} (${line.scenario} ${event} ${JSON.stringify(payload.notification_type ?? payload.reason ?? payload.error ?? payload.tool_name ?? payload.source ?? '')})`);
  });
}
