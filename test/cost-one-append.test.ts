import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { openProject } from '../src/store/compose/open-project.js';
import { GitAppendLog } from '../src/store/git/append-log.js';
import { appendCommand, sessionState } from '../src/store/sessions/log/session-append.js';
import type { SessionRuntime } from '../src/store/sessions/log/session-runtime.js';
import { signalSession } from '../src/store/sessions/verbs/signal-verb.js';
import { readUsage } from '../src/store/sessions/usage/usage-verb.js';
import { cleanupRepos, git, tempRepo } from './helpers/repo.js';

/*
 * Issue 42: a hook that finds new usage in the agent's transcript appends it with its own transition in
 * ONE write of the session's stream (one compare-and-swap), and two hooks that read the same bytes count
 * them once.
 */
afterAll(cleanupRepos);
afterEach(() => vi.restoreAllMocks());

const AGENT = '00000000-0000-4000-8000-0000000000aa';
/** The signal verb needs a runtime only for an exit's pane, a budget's kill and held prompts: none here. */
const rt = {} as SessionRuntime;

function response(n: number): string {
  const message = { id: `msg_${n}`, model: 'claude-opus-4-8', role: 'assistant', content: [{ type: 'text', text: `answer ${n}` }], usage: { input_tokens: 100 + n, output_tokens: 10 + n, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } };
  return `${JSON.stringify({ type: 'assistant', isSidechain: false, timestamp: new Date().toISOString(), message })}\n`;
}

async function claudeSession() {
  const dir = tempRepo();
  const p = openProject(dir);
  const id = 'one-append';
  await p.sessionLog.write(id, { type: 'spawn', harness: 'claude', task: 't', nodes: [], issue: null, base: 'HEAD', branch: `trellis/${id}`, worktree: dir, by: 'test', at: new Date().toISOString(), source: 'user' });
  await appendCommand(p, id, { type: 'start' }, 'test', 'supervisor');
  await appendCommand(p, id, { type: 'identify', agentSessionId: AGENT }, id, 'hook');
  await appendCommand(p, id, { type: 'busy' }, id, 'hook');
  const projects = join(dir, '.claude-test', 'projects', '-repo');
  mkdirSync(projects, { recursive: true });
  const file = join(projects, `${AGENT}.jsonl`);
  appendFileSync(file, response(1));
  return { dir, p, id, file, payload: { hook_event_name: 'Stop', session_id: AGENT, transcript_path: file } };
}

describe('a hook with new usage', () => {
  it('appends the usage and its own transition in one compare-and-swap of the stream', async () => {
    const { dir, p, id, payload } = await claudeSession();
    const before = git(dir, 'rev-parse', `refs/trellis/sessions/${id}`).trim();
    const swaps = vi.spyOn(GitAppendLog.prototype, 'swap');
    const r = await signalSession(p, rt, id, 'Stop', payload);
    expect(r.ignored).toEqual([]);
    expect(r.session).toMatchObject({ state: 'awaiting', reason: 'turn-end' });
    expect(swaps).toHaveBeenCalledTimes(1);
    // Both events, usage first (the turn ends with its cost known), each its commit, one ref move.
    const log = git(dir, 'log', '--format=%s', `${before}..refs/trellis/sessions/${id}`).trim().split('\n');
    expect(log).toHaveLength(2);
    expect(log[1]).toMatch(/usage/);
    const u = (await sessionState(p, id)).usage;
    expect(u?.byFile).toBeDefined();
    expect(Object.values(u!.byFile!)[0]).toMatchObject({ input: 101, output: 11 });
  });

  it('two hooks that read the same bytes count them once; the later one still appends its transition', async () => {
    const { p, id, file, payload } = await claudeSession();
    const state = await sessionState(p, id);
    // Both read before either appends (a command hook and an HTTP hook at once).
    const [a, b] = await Promise.all([readUsage(state, payload), readUsage(state, payload)]);
    expect(a.commands).toHaveLength(1);
    expect(b.commands).toEqual(a.commands);
    const first = await p.sessionLog.writeAll(id, [{ ...a.commands[0]!, by: id, at: new Date().toISOString(), source: 'hook' }, { type: 'busy', by: id, at: new Date().toISOString(), source: 'hook' }]);
    const second = await p.sessionLog.writeAll(id, [{ ...b.commands[0]!, by: id, at: new Date().toISOString(), source: 'hook' }, { type: 'await', reason: 'turn-end', by: id, at: new Date().toISOString(), source: 'hook' }]);
    expect(first.events.map((e) => e.type)).toEqual(['usage']);
    expect(second.events.map((e) => e.type)).toEqual(['awaiting']);
    expect(Object.values(second.state.usage!.byFile!)[0]).toMatchObject({ input: 101, output: 11 });
    // And the signal verb over a stale state (read before the other hook appended) counts nothing twice.
    appendFileSync(file, response(2));
    const stale = await sessionState(p, id);
    const hook = await signalSession(p, rt, id, 'UserPromptSubmit', { ...payload, hook_event_name: 'UserPromptSubmit' });
    expect(hook).toMatchObject({ changed: true, ignored: [], session: { state: 'running' } });
    const r = await p.sessionLog.writeAll(id, [{ ...(await readUsage(stale, payload)).commands[0]!, by: id, at: new Date().toISOString(), source: 'hook' }]);
    expect(r.events).toEqual([]);
    expect(Object.values(r.state.usage!.byFile!)[0]).toMatchObject({ input: 101 + 102, output: 11 + 12 });
  });

  it('a command the state refuses is left out and said; the usage beside it is still appended', async () => {
    const { p, id, payload } = await claudeSession();
    await appendCommand(p, id, { type: 'close', wip: null }, 'test', 'user');
    const r = await signalSession(p, rt, id, 'Stop', payload);
    expect(r.ignored).toEqual([expect.stringMatching(/^Stop: /)]);
    expect(r.changed).toBe(false);
    expect(Object.values((await sessionState(p, id)).usage!.byFile!)[0]).toMatchObject({ input: 101 });
  });
});
