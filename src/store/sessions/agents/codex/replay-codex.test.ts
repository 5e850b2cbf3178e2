import { describe, expect, it } from 'vitest';
import type { SessionState } from '../../../../projections/session.js';
import { launched, lines, signal } from '../../../../../test/helpers/replay.js';
import { codexAdapter } from './codex.js';

/*
 * Codex's recorded notify calls (`test/agents/recordings/codex-<version>-notify.jsonl`), every line
 * replayed through the adapter's mapping and the session's decide/evolve, as `trellis session signal`
 * runs them. One user turn notifies twice (the title-generation side thread and the conversation), in
 * either order: 0.169.0 sent the title thread's first, 0.171.0 the conversation's.
 */

function notify(state: SessionState, payload: unknown): SessionState {
  const r = signal(codexAdapter, state, 'notify', payload);
  expect(r.ignored).toEqual([]);
  return r.state;
}

const isTitle = (p: Record<string, unknown>) => String((p['input-messages'] as string[])[0]).startsWith('Generate a concise, single-line task title');

describe.each(['0.169.0', '0.171.0'])('replaying Codex %s’s recorded notify calls (every line)', (version) => {
  const recorded = lines(`codex-${version}-notify.jsonl`);
  const payloads = recorded.slice(1).map((l) => l.payload as Record<string, unknown>);

  it('one argv argument each; every line is a turn of the conversation or of the title thread', () => {
    expect(recorded[0]).toMatchObject({ _meta: true, version: expect.stringContaining(`codex-cli ${version}`) });
    for (const l of recorded.slice(1)) expect(l).toMatchObject({ argv_count: 1, payload: { type: 'agent-turn-complete', client: 'codex-tui' } });
    expect(payloads.filter(isTitle)).toHaveLength(1);
  });

  it('the title thread’s notify changes nothing, before or after the turn’s; the conversation’s ends the turn and names it', () => {
    const conversation = payloads.find((p) => !isTitle(p))!['thread-id'];
    let state = launched('codex', 'say hi');
    for (const [n, payload] of payloads.entries()) {
      const before = state;
      state = notify(state, payload);
      if (isTitle(payload)) expect(state, `line ${n + 1}`).toBe(before);
      else expect(state, `line ${n + 1}`).toMatchObject({ status: 'awaiting', reason: 'turn-end', source: 'hook', agentSessionId: conversation });
    }
    expect(state.agentSessionId).toBe(conversation);
  });
});
