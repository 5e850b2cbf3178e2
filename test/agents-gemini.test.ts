import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentTestBed } from './helpers/agents.js';
import { ok } from './helpers/repo.js';
import { waitFor } from './helpers/sessions.js';

/*
 * The real Gemini CLI (0.61.0, npm @google/gemini-cli) in a Trellis session, against the fake model's
 * Gemini API stand-in (GOOGLE_GEMINI_BASE_URL): status from its command hooks in the worktree's
 * .gemini/settings.json, its permission answered by name, a failed turn counted, resume continuing its
 * own conversation. No serve runs: every state here comes from the hooks, the answer's own reading of
 * the screen, or nothing.
 */

const bed = agentTestBed();
const AGENT_WAIT = 45_000;
/** Each scenario starts Gemini CLI (a 96 MB bundle: 8–12 s to start on the loaded 2-core machine) at least once. */
const SCENARIO_MS = 180_000;

describe('gemini as a harness', () => {
  it('turn end from its AfterAgent hook; a permission approved by name, then one denied by name; a failed turn counted', async () => {
    const p = bed.project();
    const id = await p.spawn('Say hi to gemini', 'gemini');
    await waitFor('the turn to end', async () => (await p.show(id)).reason === 'turn-end', AGENT_WAIT);
    const first = await p.show(id);
    expect(first).toMatchObject({ state: 'awaiting', source: 'hook' });
    expect(first.agentSessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(bed.fake.turns().map((t) => [t.api, t.userText])).toContainEqual(['gemini', 'Say hi to gemini']);
    const worktree = first.worktree;

    await ok(p.dir, ['session', 'prompt', id, '--body', 'Touch it [fake:bash touch approved-file]'], { env: p.env });
    await waitFor('awaiting{permission}', async () => (await p.show(id)).reason === 'permission', AGENT_WAIT).catch((e: Error) => {
      throw new Error(`${e.message}; log: ${p.log(id).join(' | ')}; screen: ${p.screen(id)}`);
    });
    expect(await p.show(id)).toMatchObject({ state: 'awaiting', source: 'hook', detail: expect.stringContaining('touch approved-file') });
    expect(JSON.parse(await ok(p.dir, ['session', 'answer', id, 'approve', '--json'], { env: p.env }))).toMatchObject({ chose: 'Allow once', options: ['Allow once', 'Allow for this session', 'No, suggest changes (esc)'] });
    await waitFor('the approved command to run', () => existsSync(join(worktree, 'approved-file')), AGENT_WAIT);
    await waitFor('its turn to end', async () => (await p.show(id)).reason === 'turn-end', AGENT_WAIT);

    await ok(p.dir, ['session', 'prompt', id, '--body', 'Again [fake:bash touch denied-file]'], { env: p.env });
    await waitFor('awaiting{permission} again', async () => (await p.show(id)).reason === 'permission', AGENT_WAIT);
    expect(JSON.parse(await ok(p.dir, ['session', 'answer', id, 'deny', '--json'], { env: p.env }))).toMatchObject({ chose: 'No, suggest changes (esc)' });
    // Gemini fires no hook for a denial: the answer reads its input box back from the screen.
    await waitFor('the denied turn back at its input', async () => (await p.show(id)).reason === 'turn-end', AGENT_WAIT);
    expect(await p.show(id)).toMatchObject({ state: 'awaiting', source: 'pane' });
    expect(existsSync(join(worktree, 'denied-file'))).toBe(false);

    await ok(p.dir, ['session', 'prompt', id, '--body', 'Fail please [fake:status 400]'], { env: p.env });
    await waitFor('the failed turn', async () => ((await p.show(id)).turnFailures as number) === 1, AGENT_WAIT);
    expect(await p.show(id)).toMatchObject({ state: 'awaiting', reason: 'turn-end', source: 'hook', detail: expect.stringMatching(/^the turn failed: \[API Error: .*"code":400/) });
    expect(p.log(id).filter((s) => s.startsWith('turn failed: '))).toEqual([expect.stringMatching(/^turn failed: \[API Error: .*\(hook\)$/)]);
  }, SCENARIO_MS);

  it('interrupt, then resume: the same Gemini conversation continues (--resume <its session id>), idle at its input', async () => {
    const p = bed.project();
    bed.fake.script({ text: 'I will remember MANGO' });
    const id = await p.spawn('Remember the word MANGO', 'gemini');
    await waitFor('the turn to end', async () => (await p.show(id)).reason === 'turn-end', AGENT_WAIT);
    const conversation = (await p.show(id)).agentSessionId;
    await ok(p.dir, ['session', 'interrupt', id], { env: p.env });
    await ok(p.dir, ['session', 'resume', id], { env: p.env });
    await waitFor('the resumed agent idle at its input', async () => {
      const s = await p.show(id);
      return s.state === 'awaiting' && s.reason === 'turn-end' && p.log(id).filter((l) => l.startsWith('launch')).length === 2;
    }, AGENT_WAIT);
    expect((await p.show(id)).agentSessionId).toBe(conversation);
    const mark = bed.fake.requests.length;
    await ok(p.dir, ['session', 'prompt', id, '--body', 'What was the word'], { env: p.env });
    const next = await waitFor('the next turn at the model', () => bed.fake.requests.slice(mark).find((r) => r.kind === 'turn'), AGENT_WAIT);
    // The same conversation: the earlier turn is in its history.
    expect(JSON.stringify(next.body)).toContain('Remember the word MANGO');
    await waitFor('the resumed turn to end', async () => (await p.show(id)).reason === 'turn-end' && (await p.show(id)).source === 'hook', AGENT_WAIT);
  }, SCENARIO_MS);
});
