import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { recordRelayedSignal } from '../src/cli/relayed-signal.js';
import { openProject } from '../src/store/compose/open-project.js';
import { GitAppendLog } from '../src/store/git/append-log.js';
import { appendCommand } from '../src/store/sessions/log/session-append.js';
import { cleanupRepos, tempRepo } from './helpers/repo.js';

/*
 * A confined session's relay records its agent's hook signals in its own process (issue 45). Issue 41:
 * it keeps one project between signals, so a signal reads only what was appended since its last one
 * (a fresh project per signal read the session's stream again: git forked when the projection cache
 * did not hold the tip, ~40 ms on the hook's path before its transition was decided).
 */
afterAll(cleanupRepos);
afterEach(() => vi.restoreAllMocks());

describe('the relay recording hook signals', () => {
  it('records each signal, and reads the stream again only for what another writer appended', async () => {
    const dir = tempRepo();
    const p = openProject(dir);
    const id = 'relayed';
    await p.sessionLog.write(id, { type: 'spawn', harness: 'claude', task: 't', nodes: [], issue: null, base: 'HEAD', branch: `trellis/${id}`, worktree: dir, by: 'test', at: new Date().toISOString(), source: 'user' });
    await appendCommand(p, id, { type: 'start' }, 'test', 'supervisor');
    await appendCommand(p, id, { type: 'launch', tmuxSession: id, pane: '%1', awaitsSignal: true }, 'test', 'supervisor');
    const reads = vi.spyOn(GitAppendLog.prototype, 'readEach');
    expect(await recordRelayedSignal(dir, id, 'busy', '')).toBe(0);
    const first = reads.mock.calls.length;
    // The relay's own last append is its fold's tip: nothing to read.
    expect(await recordRelayedSignal(dir, id, 'turn-end', '')).toBe(0);
    expect(reads.mock.calls.length).toBe(first);
    expect(await p.sessionLog.get(id)).toMatchObject({ status: 'awaiting', reason: 'turn-end' });
    // Another writer's append (a person's verb) is read, as a catch-up from the relay's tip.
    await appendCommand(p, id, { type: 'busy' }, id, 'hook');
    const before = reads.mock.calls.length;
    expect(await recordRelayedSignal(dir, id, 'turn-end', '')).toBe(0);
    expect(reads.mock.calls.length).toBe(before + 1);
    expect(reads.mock.calls.at(-1)![0]).toEqual([expect.objectContaining({ stopAt: expect.any(String) })]);
    expect(await p.sessionLog.get(id)).toMatchObject({ status: 'awaiting', reason: 'turn-end' });
  });
});
