import { describe, expect, it } from 'vitest';
import { agentTestBed, CLAUDE_VERSIONS, type SessionShow } from './helpers/agents.js';
import { ok, ROOT } from './helpers/repo.js';
import { startServe } from './helpers/serve.js';
import { waitFor } from './helpers/sessions.js';

/*
 * One input lane (issue 41 item 5) with the real Claude Code against the fake model, both versions: a
 * prompt typed just after a short turn reaches the agent; a person's "/clear" typed with `session keys` while the agent works keeps a prompt queued
 * meanwhile held, saying so, never pasted into it (the real program would answer "Unknown command:
 * /clearhello …"); once the person's Enter runs /clear, the prompt goes in alone.
 */

const bed = agentTestBed();
const AGENT_WAIT = 45_000;
const lastPrompt = (s: SessionShow) => (s.timeline as readonly { body: string; held?: string }[]).at(-1)!;

describe.each(CLAUDE_VERSIONS)('claude %s: every input on one lane', (claudeVersion) => {
  it('a prompt after a short turn is typed; a prompt queued while a person types "/clear" waits for their Enter, then goes in alone', async () => {
    const p = bed.project({ claudeVersion });
    let serve: Awaited<ReturnType<typeof startServe>> | undefined;
    let release = (): void => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    try {
      bed.fake.clearScript();
      // This test's turns only (the fake model serves every test of the file).
      const seen = bed.fake.turns().length;
      const turns = () => bed.fake.turns().slice(seen);
      // The second turn runs until the person has typed and the prompt is held (once a guessed 12 s, which
      // a loaded machine could outrun, and an unloaded one waited out).
      bed.fake.script({ text: 'One done.' }, { text: 'Working slowly.', until: released }, { text: 'Got hello.' });
      const id = await p.spawn('Say one', 'claude');
      await waitFor('the first turn to end', async () => (await p.show(id)).reason === 'turn-end', AGENT_WAIT);

      // After one short turn its box sits on the upper rows of the 50-row pane: read there, the prompt is typed.
      const typed = await ok(p.dir, ['session', 'prompt', id, '--body', 'Work slowly ACC-SLOW'], { env: p.env });
      expect(typed).toContain('prompted (delivered');
      // The serve (its pane reader) from here on, as for a person at the page.
      serve = await startServe(ROOT, p.dir, p.env);
      await waitFor('the slow turn to reach the model', () => turns().some((t) => t.userText.includes('ACC-SLOW')), AGENT_WAIT);

      // A person types "/clear" (no Enter) while the agent works; a prompt sent meanwhile is held.
      await ok(p.dir, ['session', 'keys', id, '--hex', Buffer.from('/clear').toString('hex')], { env: p.env });
      // (Claude Code draws a no-break space after its ❯.)
      await waitFor('"/clear" in the box', () => /^❯\s\/clear\s*$/m.test(p.screen(id)), AGENT_WAIT);
      expect(await ok(p.dir, ['session', 'prompt', id, '--body', 'hello ACC-NOTYPE'], { env: p.env })).toContain('prompt queued, not delivered');
      // Held by the turn still running (the fake has not answered it), not by a turn's end.
      expect(await p.show(id)).toMatchObject({ state: 'running', pending: 1 });
      release();

      // The turn ends with the person's text still in the box: the prompt stays held and says why.
      await waitFor('the held prompt to say it waits for the typed text', async () => /holds "\/clear", which someone is typing/.test(lastPrompt(await p.show(id)).held ?? ''), AGENT_WAIT);
      expect(await p.show(id)).toMatchObject({ state: 'awaiting', reason: 'turn-end', pending: 1 });
      expect(p.screen(id)).toMatch(/^❯\s\/clear\s*$/m);
      expect(turns().some((t) => t.userText.includes('ACC-NOTYPE'))).toBe(false);

      // The person's Enter runs /clear; the box is empty again and the prompt goes in, alone.
      await ok(p.dir, ['session', 'keys', id, 'Enter'], { env: p.env });
      await waitFor('the held prompt to reach the model', () => turns().some((t) => t.userText.includes('ACC-NOTYPE')), AGENT_WAIT);
      // The model reads the prompt as a message of its own (after /clear's own record of the command, if any), never "/clearhello …".
      const got = turns().find((t) => t.userText.includes('ACC-NOTYPE'))!.userText.trim();
      expect(got).toMatch(/(^|\n)hello ACC-NOTYPE$/);
      expect(got).not.toMatch(/\/clear\s*hello/);
      await waitFor('its turn to end', async () => {
        const s = await p.show(id);
        return s.reason === 'turn-end' && s.pending === 0;
      }, AGENT_WAIT);
      expect(lastPrompt(await p.show(id))).not.toHaveProperty('held');
      expect(p.screen(id)).not.toMatch(/Unknown (slash )?command/i);
    } finally {
      release();
      await serve?.stop();
    }
  }, 150_000);
});
