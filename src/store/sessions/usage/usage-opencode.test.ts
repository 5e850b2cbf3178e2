import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { opencodeMessagesUsage } from './usage-opencode.js';

const REC = join(import.meta.dirname, '../../../../test/agents/recordings');

/** opencode 1.18.33's messages of the recorded conversation, each at its last recorded figure, in order. */
function recordedMessages(): Record<string, unknown>[] {
  const byId = new Map<string, Record<string, unknown>>();
  for (const line of readFileSync(join(REC, 'opencode-1.18.33-events.jsonl'), 'utf8').trimEnd().split('\n')) {
    const e = JSON.parse(line) as { type: string; properties?: { info?: Record<string, unknown> } };
    const info = e.properties?.info;
    if (e.type === 'message.updated' && info && typeof info.id === 'string') byId.set(info.id, info);
  }
  return [...byId.values()];
}

describe('opencode’s usage, from its messages (the recorded 1.18.33 shape)', () => {
  it('counts each answered message once, its tokens and its own cost; a later read takes only what is new', () => {
    const messages = recordedMessages();
    const answers = messages.filter((m) => m.role === 'assistant');
    expect(answers.length).toBeGreaterThan(1);
    const all = opencodeMessagesUsage(messages, 0)!;
    expect(all.to).toBe(messages.length);
    expect(all.entries.map((e) => e.key)).toEqual(answers.map((m) => m.id));
    // The recording's fake answered 10 in, 5 out, at no cost its config gave.
    expect(all.entries[0]).toMatchObject({ model: 'gpt-fake', input: 10, output: 5, cacheRead: 0, cacheWrite: 0, agentUsd: 0 });
    expect(all.turns).toBe(messages.filter((m) => m.role === 'user').length);
    expect(all.context).toEqual({ model: 'gpt-fake', used: 15, window: null });
    expect(opencodeMessagesUsage(messages, messages.length)).toBeNull();
    const later = opencodeMessagesUsage(messages, 2)!;
    expect(later.entries.map((e) => e.key)).toEqual(messages.slice(2).filter((m) => m.role === 'assistant').map((m) => m.id));
  });

  it('maps opencode’s tokens back to the provider’s: input without the cached, output with the reasoning', () => {
    // What opencode 1.18.33 recorded (GET /session/:id/message) for a Chat Completions answer of
    // prompt_tokens 6016 (cached_tokens 5014) and completion_tokens 206 (reasoning_tokens 51): its input
    // leaves out cache reads and writes, its output leaves out the reasoning, which it keeps apart.
    const user = { id: 'msg_u', role: 'user', time: { created: 1 } };
    const answer = { id: 'msg_a', role: 'assistant', modelID: 'gpt-fake', cost: 0, time: { created: 2, completed: 3 }, tokens: { total: 6222, input: 1002, output: 155, reasoning: 51, cache: { read: 5014, write: 0 } } };
    expect(opencodeMessagesUsage([user, answer], 0)!.entries).toEqual([{ key: 'msg_a', model: 'gpt-fake', input: 1002, output: 206, cacheRead: 5014, cacheWrite: 0, at: new Date(3).toISOString(), agentUsd: 0 }]);
  });

  it('stops before an answer still being written (its figures are not final) and reads it once completed', () => {
    const user = { id: 'msg_u1', role: 'user', time: { created: 1 } };
    const writing = { id: 'msg_a1', role: 'assistant', modelID: 'm', cost: 0.5, time: { created: 2 }, tokens: { input: 1, output: 0, reasoning: 0, cache: { read: 0, write: 0 } } };
    expect(opencodeMessagesUsage([user, writing], 0)).toEqual({ to: 1, entries: [], turns: 1, context: null });
    const done = { ...writing, time: { created: 2, completed: 3 }, tokens: { input: 100, output: 20, reasoning: 5, cache: { read: 300, write: 40 } } };
    expect(opencodeMessagesUsage([user, done], 1)).toEqual({
      to: 2,
      turns: 0,
      entries: [{ key: 'msg_a1', model: 'm', input: 100, output: 25, cacheRead: 300, cacheWrite: 40, at: new Date(3).toISOString(), agentUsd: 0.5 }],
      context: { model: 'm', used: 465, window: null },
    });
  });
});
