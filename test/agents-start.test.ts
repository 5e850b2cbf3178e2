import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentTestBed, CODEX_VERSIONS, type SessionShow } from './helpers/agents.js';
import { ok, ROOT, trellis } from './helpers/repo.js';
import { startServe } from './helpers/serve.js';
import { protocolDir } from '../src/store/sessions/agents/codex/codex-app-server.js';
import { waitFor } from './helpers/sessions.js';

/*
 * A truthful start, with the real claude and codex against the fake model: a session is `starting` until
 * the agent's own first signal; a first-run dialog on its screen is `awaiting{setup}` naming it (source
 * `pane`), never `running`; what the agent's config lacks is said at spawn with its repair; an agent that
 * is not installed is refused at spawn.
 */

const bed = agentTestBed();
const project = (setup: Parameters<typeof bed.project>[0] = {}) => bed.project(setup);

const AGENT_WAIT = 45_000;
/** The newest entry of a session's prompt timeline. */
const lastPrompt = (s: SessionShow) => (s.timeline as readonly { body: string; held?: string }[]).at(-1);
/** What a Codex session's app-server watcher said (its refusal among it). */
const watchLog = (env: NodeJS.ProcessEnv, id: string) => readFileSync(join(protocolDir(id, env), 'watch.log'), 'utf8');

describe('a session is starting until the agent’s own first signal', () => {
  it('claude set up and trusting the main checkout: starting, then running on its SessionStart, then the turn ends; no warnings', async () => {
    const p = project();
    bed.fake.script({ text: 'Started fine' });
    const { id, warnings, stderr } = await p.spawnRun('Start cleanly', 'claude');
    expect(warnings).toEqual([]);
    expect(stderr).not.toContain('warning');
    await waitFor('the turn to end', async () => (await p.show(id)).reason === 'turn-end', AGENT_WAIT);
    // Launch leaves it starting; the agent's SessionStart hook (identify) is what makes it running.
    // The transitions in their order; a usage record (issue 42) is read at whichever hook finds the agent's
    // first answer written, which a relayed hook can reach before or after the prompt's own signal.
    const log = p.log(id).filter((s) => !s.startsWith('usage:'));
    expect(log.slice(0, 4)).toEqual([expect.stringMatching(/^spawn claude/), expect.stringMatching(/^checks fixed at /), 'start (supervisor)', expect.stringMatching(/^launch: /)]);
    expect(log).not.toContain('run (supervisor)');
    const identify = log.findIndex((s) => s.startsWith('identify'));
    expect(log[identify + 1]).toBe('run (hook)');
    expect(log.at(-1)).toBe('await turn-end (hook)');
  });
});

describe('first-run dialogs read from the pane are awaiting{setup}, never running', () => {
  it('claude in a folder it has not trusted: warned at spawn; awaiting{setup} naming the trust dialog; a prompt meanwhile is held, not typed into it (the folder stays untrusted); answered by a raw key, the hooks take over and the held prompt is delivered', async () => {
    const p = project({ trustProject: false });
    bed.fake.script({ text: 'Trusted now' }, { text: 'Held one answered' });
    const { id, warnings, stderr } = await p.spawnRun('Work in an untrusted folder', 'claude');
    expect(warnings).toEqual([expect.stringContaining(`Claude Code has not trusted ${p.dir}`)]);
    expect(stderr).toContain(`warning: Claude Code has not trusted ${p.dir}`);
    expect(warnings[0]).toContain('Yes, I trust this folder');

    await waitFor('awaiting{setup}', async () => (await p.show(id)).state === 'awaiting', AGENT_WAIT);
    expect(await p.show(id)).toMatchObject({ state: 'awaiting', reason: 'setup', source: 'pane', detail: expect.stringContaining('workspace trust') });
    expect(p.screen(id)).toContain('Yes, I trust this folder');
    expect(p.log(id)).not.toContain('run (supervisor)');
    // Nothing has answered for the user: the folder is still untrusted in claude's own state.
    const state = () => JSON.parse(readFileSync(join(p.agent.home, '.claude.json'), 'utf8')) as { projects?: Record<string, { hasTrustDialogAccepted?: boolean }> };
    expect(Object.values(state().projects ?? {}).some((v) => v.hasTrustDialogAccepted)).toBe(false);

    // A prompt sent now is held on the timeline, never typed into the dialog (its Enter would accept it).
    const held = await ok(p.dir, ['session', 'prompt', id, '--body', 'Held while the dialog shows'], { env: p.env });
    expect(held).toContain('prompt queued, not delivered');
    expect(lastPrompt(await p.show(id))).toMatchObject({ body: 'Held while the dialog shows', held: expect.any(String) });
    expect(p.screen(id)).toContain('Yes, I trust this folder');
    expect(Object.values(state().projects ?? {}).some((v) => v.hasTrustDialogAccepted)).toBe(false);

    // A person answers the dialog (raw keys are for that): claude starts, its hooks drive the state.
    await ok(p.dir, ['session', 'keys', id, 'Enter'], { env: p.env });
    // Claude keys the acceptance by the main checkout, not the worktree: one answer covers every session.
    await waitFor('the trust to be recorded', () => state().projects?.[p.dir]?.hasTrustDialogAccepted === true, AGENT_WAIT);
    // The task's turn ends; the held prompt is then delivered: it reaches the model as a turn of its own.
    await waitFor('the held prompt to reach the model', () => bed.fake.turns().some((t) => t.userText.includes('Held while the dialog shows')), AGENT_WAIT);
    // Its own turn's end: its answer drawn, then the wait. (The task's turn's idle notice can land after the
    // delivery and read awaiting{turn-end} before the held prompt's own hooks say it runs: not its end.)
    await waitFor('the held prompt’s turn to end', async () => {
      if (!p.screen(id).includes('Held one answered')) return false;
      const s = await p.show(id);
      return s.state === 'awaiting' && s.reason === 'turn-end' && s.pending === 0;
    }, AGENT_WAIT);
    expect(await p.show(id)).toMatchObject({ state: 'awaiting', reason: 'turn-end', source: 'hook', detail: null });
    expect(lastPrompt(await p.show(id))).not.toHaveProperty('held');
  });

  it('claude with an API key it has not approved: awaiting{setup} naming the key dialog', async () => {
    const p = project({ approveKey: false });
    const { id, warnings } = await p.spawnRun('Use the key', 'claude');
    expect(warnings).toEqual([expect.stringContaining('Detected a custom API key')]);
    await waitFor('awaiting{setup}', async () => (await p.show(id)).state === 'awaiting', AGENT_WAIT);
    expect(await p.show(id)).toMatchObject({ reason: 'setup', source: 'pane', detail: expect.stringContaining('API key confirmation') });
  });

  it.each(CODEX_VERSIONS)('codex %s in a folder it has not trusted: warned at spawn; awaiting{setup} naming folder access', async (codexVersion) => {
    const p = project({ trustProject: false, codexVersion });
    const { id, warnings } = await p.spawnRun('Work in an untrusted folder', 'codex');
    expect(warnings).toEqual([expect.stringContaining(`Codex has not trusted ${p.dir}`)]);
    await waitFor('awaiting{setup}', async () => (await p.show(id)).state === 'awaiting', AGENT_WAIT);
    expect(await p.show(id)).toMatchObject({ reason: 'setup', source: 'pane', detail: expect.stringContaining('folder access') });
    expect(p.log(id)).not.toContain('run (supervisor)');
    // Confined, by default over its app-server: the watcher read what the first run asks and handed the launch to the pane.
    expect(watchLog(p.env, id)).toContain(`the notify path instead: Codex's first run asks folder access: Codex has not been told whether to trust ${p.dir}`);
  });
});

describe('codex’s own login', () => {
  it.each(CODEX_VERSIONS)('codex %s on OpenAI’s provider, not logged in: warned at spawn (codex login status); awaiting{setup} naming its sign-in', async (codexVersion) => {
    const p = project({ codexLogin: false, codexProvider: 'openai', codexVersion });
    const { id, warnings } = await p.spawnRun('Needs a login', 'codex');
    expect(warnings).toEqual([expect.stringContaining("Codex is not logged in ('codex login status' says so)")]);
    await waitFor('awaiting{setup}', async () => (await p.show(id)).state === 'awaiting', AGENT_WAIT);
    expect(await p.show(id)).toMatchObject({ reason: 'setup', source: 'pane', detail: expect.stringContaining('Sign in with ChatGPT') });
    expect(watchLog(p.env, id)).toContain(`the notify path instead: Codex's first run asks login: Codex is not logged in`);
  });
});

describe('an agent that is not installed is refused at spawn', () => {
  it('exit 1 naming the program and how to install it; nothing is spawned', async () => {
    const p = project();
    const env = { ...p.env, PATH: '/usr/bin:/bin' };
    for (const [harness, pkg] of [['claude', '@anthropic-ai/claude-code'], ['codex', '@openai/codex']] as const) {
      const r = await trellis(p.dir, ['session', 'spawn', 'Anything', '--harness', harness], { env });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`the ${harness} harness runs '${harness}', which is not installed here`);
      expect(r.stderr).toContain(`npm install -g ${pkg}`);
      expect(r.stderr).toContain('--harness shell');
    }
    expect(JSON.parse(await ok(p.dir, ['session', 'ls', '--all', '--json'], { env }))).toEqual([]);

    // Over HTTP: a 422 naming the program; nothing spawned either.
    const serve = await startServe(ROOT, p.dir, env);
    try {
      const r = await fetch(new URL('/api/sessions', serve.url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ task: 'Anything', harness: 'codex' }) });
      expect(r.status).toBe(422);
      // Beside the error, which harness and program (a page says it in its own words from these).
      expect(await r.json()).toEqual({ error: { code: 'HARNESS_NOT_INSTALLED', message: expect.stringContaining("runs 'codex', which is not installed here") }, harness: 'codex', program: 'codex' });
      expect(await (await fetch(new URL('/api/sessions?all', serve.url))).json()).toMatchObject({ sessions: [] });
    } finally {
      await serve.stop();
    }
  });
});
