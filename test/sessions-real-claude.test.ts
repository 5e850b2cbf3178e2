import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { agentProject, startFakeModel, stopAgents, type AgentProject, type FakeModel } from './helpers/agents.js';
import { cleanupRepos, git, ok, ROOT } from './helpers/repo.js';
import { startServe } from './helpers/serve.js';
import { waitFor } from './helpers/sessions.js';

/*
 * The real Claude Code (2.1.197, pinned) against the local fake model API: what issue 18 found the
 * session layer getting wrong, each seen with the real program. Directives in the prompt text
 * (`[fake:bash …]`, `[fake:ask]`, `[fake:status 500]`) choose the model's answer per turn.
 */

let fake: FakeModel;
const projects: AgentProject[] = [];
beforeAll(async () => {
  fake = await startFakeModel();
});
afterEach(() => {
  for (const p of projects.splice(0)) stopAgents(p);
});
afterAll(async () => {
  await fake.close();
  cleanupRepos();
});

function project(): AgentProject {
  const p = agentProject(fake);
  projects.push(p);
  return p;
}

const userTurns = () => fake.turns().map((t) => t.userText);
const AGENT_MS = 45_000;

describe('the real claude: input only where it reads input', () => {
  it('a prompt during a permission dialog is not typed into it; approved with a raw key, the Stop ends the wait and the held prompt is delivered', async () => {
    const p = project();
    const id = await p.spawn('Touch a file [fake:bash touch approved-file]', 'claude');
    await waitFor('awaiting{permission}', async () => (await p.show(id)).reason === 'permission', AGENT_MS);
    expect(p.screen(id)).toMatch(/Do you want to proceed\?/);
    const held = await ok(p.dir, ['session', 'prompt', id, '--body', 'Then say the magic word'], { env: p.env });
    expect(held).toMatch(/prompt queued, not delivered: the agent shows a permission dialog/);
    // The dialog is still there, unanswered: nothing was typed into it.
    expect(p.screen(id)).toMatch(/Do you want to proceed\?/);
    const worktree = (await p.show(id)).worktree;
    expect(existsSync(join(worktree, 'approved-file'))).toBe(false);
    expect(userTurns()).not.toContain('Then say the magic word');

    // A person answers the dialog (Enter: "Yes"); the tool runs, the turn ends with Stop → awaiting{turn-end}, and the held prompt goes in.
    await ok(p.dir, ['session', 'keys', id, 'Enter'], { env: p.env });
    await waitFor('the approved command to run', () => existsSync(join(worktree, 'approved-file')), AGENT_MS);
    await waitFor('the held prompt to reach the model', () => userTurns().includes('Then say the magic word'), AGENT_MS);
    await waitFor('its turn to end', async () => {
      const s = await p.show(id);
      return s.state === 'awaiting' && s.reason === 'turn-end' && s.pending === 0;
    }, AGENT_MS);
    const log = git(p.dir, 'log', '--reverse', '--format=%s', `refs/trellis/sessions/${id}`).trim().split('\n');
    expect(log.filter((l) => /^(await|run|deliver)/.test(l))).toEqual([
      // SessionStart: the agent is up.
      'run (hook)',
      'await permission (hook)',
      'run (hook)',
      'await turn-end (hook)',
      'deliver prompt 1 (supervisor)',
      'run (supervisor)',
      'await turn-end (hook)',
    ]);
  });

  it('AskUserQuestion is awaiting{question}, answered with raw keys', async () => {
    const p = project();
    const id = await p.spawn('Ask me something [fake:ask]', 'claude');
    await waitFor('awaiting{question}', async () => (await p.show(id)).reason === 'question', AGENT_MS);
    // Its permission_prompt notification (several seconds later) leaves it a question.
    expect(await p.show(id)).toMatchObject({ state: 'awaiting', reason: 'question', source: 'hook' });
    await ok(p.dir, ['session', 'keys', id, 'Enter'], { env: p.env });
    await waitFor('the answered turn to end', async () => (await p.show(id)).reason === 'turn-end', AGENT_MS);
  });
});

describe('the real claude: failed turns', () => {
  it('a 401 is awaiting{auth} naming the login problem within seconds', async () => {
    const p = project();
    const started = Date.now();
    const id = await p.spawn('Hello [fake:status 401]', 'claude');
    await waitFor('awaiting{auth}', async () => (await p.show(id)).reason === 'auth', AGENT_MS);
    const s = await p.show(id);
    expect(s).toMatchObject({ state: 'awaiting', reason: 'auth', source: 'hook', turnFailures: 0, detail: expect.stringMatching(/^authentication_failed: .*\(log in/) });
    // Launch included (the agent starting takes most of it, longer on a loaded machine): before the idle
    // prompt's minute, so it is the StopFailure hook that said it, not the idle notice.
    expect(Date.now() - started).toBeLessThan(55_000);
  });

  it('three 5xx turns in a row quarantine the session (the idle notices between them never reset the count)', async () => {
    const p = project();
    const id = await p.spawn('First [fake:status 500]', 'claude');
    const failures = async (n: number) => {
      const s = await p.show(id);
      return s.turnFailures === n && s.state === 'awaiting' ? s : null;
    };
    const first = await waitFor('failure 1', () => failures(1), AGENT_MS);
    expect(first).toMatchObject({ reason: 'turn-end', detail: expect.stringMatching(/^the turn failed: server_error/) });
    await ok(p.dir, ['session', 'prompt', id, '--body', 'Second [fake:status 500]'], { env: p.env });
    await waitFor('failure 2', () => failures(2), AGENT_MS);
    await ok(p.dir, ['session', 'prompt', id, '--body', 'Third [fake:status 500]'], { env: p.env });
    await waitFor('the quarantine', async () => (await p.show(id)).state === 'quarantined', AGENT_MS);
    expect(await p.show(id)).toMatchObject({ state: 'quarantined', reason: '3 turn failures in a row', source: 'supervisor', turnFailures: 3 });
  });
});

describe('the real claude: the program stays', () => {
  it('/resume inside claude leaves the session live: the next prompt is a turn of the same program', async () => {
    const p = project();
    const id = await p.spawn('Say hi', 'claude');
    await waitFor('the first turn to end', async () => (await p.show(id)).reason === 'turn-end', AGENT_MS);
    const { agentSessionId } = await p.show(id);
    await ok(p.dir, ['session', 'prompt', id, '--body', `/resume ${agentSessionId}`], { env: p.env });
    // The prompt made it `running`; SessionEnd{resume} leaves it live and SessionStart{resume} finds it idle at its input.
    const log = () => git(p.dir, 'log', '--reverse', '--format=%s', `refs/trellis/sessions/${id}`).trim().split('\n');
    await waitFor('awaiting{turn-end} after the /resume', () => log().at(-1) === 'await turn-end (hook)' && log().at(-2) === 'run (user)', AGENT_MS);
    expect(log().slice(-3)).toEqual([`prompt: /resume ${agentSessionId}`, 'run (user)', 'await turn-end (hook)']);
    const after = await ok(p.dir, ['session', 'prompt', id, '--body', 'Still there?'], { env: p.env });
    expect(after).toContain('prompted (delivered)');
    await waitFor('the next turn to reach the model', () => userTurns().includes('Still there?'), AGENT_MS);
    await waitFor('its turn to end', async () => (await p.show(id)).reason === 'turn-end', AGENT_MS);
    expect(await p.show(id)).toMatchObject({ state: 'awaiting', reason: 'turn-end', agentSessionId });

    // Interrupted and resumed by Trellis with no prompt: `claude --resume <id>`, idle at its input once it is up.
    await ok(p.dir, ['session', 'interrupt', id], { env: p.env });
    await ok(p.dir, ['session', 'resume', id], { env: p.env });
    await waitFor('the resumed agent idle at its input', async () => (await p.show(id)).state === 'awaiting', AGENT_MS).catch(async (e: Error) => {
      // What the log and the screen said, to explain a failure on a loaded machine.
      throw new Error(`${e.message}; log: ${git(p.dir, 'log', '--reverse', '--format=%s', `refs/trellis/sessions/${id}`).trim().split('\n').join(' | ')}; screen: ${p.screen(id)}`);
    });
    // The old program's SessionEnd{other}, fired as the interrupt killed it, never interrupted the new one.
    expect(git(p.dir, 'log', '--format=%s', `refs/trellis/sessions/${id}`)).not.toContain('interrupt process-exit');
    expect(await p.show(id)).toMatchObject({ state: 'awaiting', reason: 'turn-end', source: 'hook', agentSessionId });
  });
});

describe('the real claude: what no hook says', () => {
  it('Esc mid-turn fires no hook: the server reads the input box back from the pane, awaiting{turn-end} with source pane', async () => {
    const p = project();
    writeFileSync(join(p.dir, 'trellis.json'), '{}\n');
    const serve = await startServe(ROOT, p.dir, p.env);
    try {
      const id = await p.spawn('Think for a long time [fake:hang]', 'claude');
      await waitFor('the turn to run', async () => (await p.show(id)).state === 'running' && /esc to interrupt/.test(p.screen(id)), AGENT_MS);
      await ok(p.dir, ['session', 'keys', id, 'Escape'], { env: p.env });
      await waitFor('awaiting{turn-end} from the pane', async () => (await p.show(id)).state === 'awaiting', 15_000);
      expect(await p.show(id)).toMatchObject({ state: 'awaiting', reason: 'turn-end', source: 'pane' });
    } finally {
      await serve.stop();
    }
  });
});
