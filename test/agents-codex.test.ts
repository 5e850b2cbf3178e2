import { describe, expect, it } from 'vitest';
import { agentTestBed, CODEX_VERSIONS, type AgentProject } from './helpers/agents.js';
import { ok } from './helpers/repo.js';
import { waitFor } from './helpers/sessions.js';

/*
 * Codex keeps its own conversation: one user turn makes codex notify twice, once for its title-generation
 * side thread (never saved, so never resumable) and once for the conversation. The session records the
 * conversation's thread, and resume after an interrupt continues it. Real codex 0.169 against the fake model.
 */

const bed = agentTestBed();

const AGENT_WAIT = 45_000;
/** The thread codex named in a request (its `session-id` header). */
const threadOf = (r: { headers: Record<string, unknown> }) => String(r.headers['session-id'] ?? '');
const hex = (s: string) => Buffer.from(s, 'utf8').toString('hex');

/** Codex's notify path (its app-server is the default, confined or not: agents-codex-app-server). */
function notifyPath(p: AgentProject): AgentProject {
  p.env.TRELLIS_CODEX_CHANNEL = 'notify';
  return p;
}

describe.each(CODEX_VERSIONS)('codex %s keeps its own conversation', (codexVersion) => {
  it('the title thread answering last is not recorded; interrupt + resume continues the same conversation', async () => {
    const p = notifyPath(bed.project({ codexVersion }));
    const before = bed.fake.requests.length;
    // The title thread's answer comes after the turn's, so its notify is the later one.
    bed.fake.sideDelayMs = 1500;
    try {
      bed.fake.script({ text: 'I will remember PLUM' });
      const id = await p.spawn('Remember the word PLUM', 'codex');
      await waitFor('the title thread to finish too', () => bed.fake.requests.slice(before).filter((r) => r.api === 'openai').length >= 2, AGENT_WAIT);
      await waitFor('the turn to end', async () => (await p.show(id)).reason === 'turn-end', AGENT_WAIT);
      const seen = bed.fake.requests.slice(before);
      const conversation = threadOf(seen.find((r) => r.kind === 'turn')!);
      const title = threadOf(seen.find((r) => r.kind === 'side' && r.api === 'openai')!);
      expect(conversation).not.toBe(title);
      // The title thread's answer is out, and codex notifies for it right after: a second identify (what a
      // broken adapter records) would land within this bound; none must.
      await waitFor('the title answer to be sent', () => bed.fake.inFlight() === 0, AGENT_WAIT);
      const identifies = () => p.log(id).filter((s) => s.startsWith('identify'));
      await waitFor('a second identify', () => identifies().length > 1, 3_000).catch(() => null);
      expect(identifies()).toEqual([`identify: agent session ${conversation}`]);
      expect((await p.show(id)).agentSessionId).toBe(conversation);

      await ok(p.dir, ['session', 'interrupt', id], { env: p.env });
      await ok(p.dir, ['session', 'resume', id], { env: p.env });
      await waitFor('codex to show the resumed conversation', () => /Remember the word PLUM/.test(p.screen(id)), AGENT_WAIT);
      expect(p.screen(id)).not.toContain('No saved session found');
      // A person types the next turn into the resumed codex.
      bed.fake.script({ text: 'The word was PLUM' });
      const mark = bed.fake.requests.length;
      await ok(p.dir, ['session', 'keys', id, '--hex', hex('What was the word?')], { env: p.env });
      await waitFor('the typed text on screen', () => /What was the word\?/.test(p.screen(id)), 10_000);
      await ok(p.dir, ['session', 'keys', id, 'Enter'], { env: p.env });
      const next = await waitFor('the next turn at the model', () => bed.fake.requests.slice(mark).find((r) => r.kind === 'turn'), AGENT_WAIT);
      // The same conversation: same thread, and the earlier turn is in its input.
      expect(threadOf(next)).toBe(conversation);
      expect(JSON.stringify(next.body)).toContain('Remember the word PLUM');
      await waitFor('the resumed turn to end', async () => (await p.show(id)).reason === 'turn-end', AGENT_WAIT);
      expect(await p.show(id)).toMatchObject({ state: 'awaiting', agentSessionId: conversation, source: 'hook' });
    } finally {
      bed.fake.sideDelayMs = 0;
    }
  });

  it('the title thread finishing while the turn still runs neither ends the turn nor names the conversation', async () => {
    const p = notifyPath(bed.project({ codexVersion }));
    const before = bed.fake.requests.length;
    bed.fake.script({ text: 'Slow answer', delayMs: 3000 });
    const id = await p.spawn('Take your time', 'codex');
    await waitFor('the turn to end', async () => (await p.show(id)).reason === 'turn-end', AGENT_WAIT);
    const conversation = threadOf(bed.fake.requests.slice(before).find((r) => r.kind === 'turn')!);
    const log = p.log(id);
    expect(log.filter((s) => s.startsWith('identify'))).toEqual([`identify: agent session ${conversation}`]);
    // Nothing said the turn ended before the conversation's own notify identified it.
    expect(log.findIndex((s) => s.startsWith('await turn-end'))).toBeGreaterThan(log.findIndex((s) => s.startsWith('identify')));
  });
});
