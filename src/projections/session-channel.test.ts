import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../events/index.js';
import { foldSession } from './session.js';
import { sessionView } from './session-view.js';

/* Which channel a session's states come through (issue 41): the agent's own signals since its latest start. */

const at = '2026-03-01T10:00:00.000Z';
const e = (clock: number, type: SessionEvent['type'], data: object, source: SessionEvent['source']): SessionEvent =>
  ({ v: 1, type, at, by: 'ann', clock, source, data }) as SessionEvent;
const spawn = (harness: string) => ({ harness, task: 'Fix it', nodes: [], issue: null, base: 'b'.repeat(40), branch: 'trellis/s1', worktree: '/w/s1' });
const started = (harness: string) => [e(1, 'spawned', spawn(harness), 'user'), e(2, 'starting', {}, 'supervisor'), e(3, 'launched', { tmuxSession: 's1', pane: '%1', awaitsSignal: true }, 'supervisor')];
const then = (log: SessionEvent[], type: SessionEvent['type'], data: object, source: SessionEvent['source']): SessionEvent[] => [...log, e(log.length + 1, type, data, source)];
const turnEnd = (log: SessionEvent[], source: SessionEvent['source']) => then(then(log, 'running', {}, source), 'awaiting', { reason: 'turn-end' }, source);

const table: [string, SessionEvent[], string | null][] = [
  ['codex before its first signal', started('codex'), null],
  ['codex over its app-server', turnEnd(started('codex'), 'protocol'), 'protocol'],
  ['codex on its notify program', turnEnd(started('codex'), 'hook'), 'notify'],
  ['claude from its hooks', turnEnd(started('claude'), 'hook'), 'hook'],
  ['a pane reading after the protocol keeps the protocol', then(turnEnd(started('codex'), 'protocol'), 'awaiting', { reason: 'setup', detail: 'x' }, 'pane'), 'protocol'],
  ['the user interrupting keeps what the agent said', then(turnEnd(started('codex'), 'protocol'), 'interrupted', { reason: 'by-user' }, 'user'), 'protocol'],
  ['resumed: unknown again until the new launch says', then(then(turnEnd(started('codex'), 'protocol'), 'interrupted', { reason: 'by-user' }, 'user'), 'resumed', {}, 'user'), null],
  ['resumed onto notify (the app-server refused)', turnEnd(then(then(turnEnd(started('codex'), 'protocol'), 'interrupted', { reason: 'by-user' }, 'user'), 'resumed', {}, 'user'), 'hook'), 'notify'],
  ['a signal before its launch is logged stays', then(then(then([e(1, 'spawned', spawn('codex'), 'user'), e(2, 'starting', {}, 'supervisor')], 'running', {}, 'protocol'), 'launched', { tmuxSession: 's1', pane: '%1', awaitsSignal: true }, 'supervisor'), 'awaiting', { reason: 'turn-end' }, 'pane'), 'protocol'],
];

describe('a session says which channel its states come through', () => {
  it.each(table)('%s', (_name, log, channel) => {
    expect(sessionView(foldSession('s1', log)).channel).toBe(channel);
  });
});
