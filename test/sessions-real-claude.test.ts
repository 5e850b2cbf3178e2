import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { agentProject, CLAUDE_VERSIONS, startFakeModel, stopAgents, type AgentProject, type ClaudeVersion, type FakeModel, type SessionShow } from './helpers/agents.js';

import { BIN, cleanupRepos, git, ok, ROOT } from './helpers/repo.js';
import { startServe, type ServeProcess } from './helpers/serve.js';
import { tmux, waitFor } from './helpers/sessions.js';

/*
 * The real Claude Code against the local fake model API, for every version the adapter is checked
 * against (the oldest supported, 2.1.197, and the newest on npm, 2.1.331: its auto mode is the default,
 * its trust dialog pre-selects "No, exit", its Bash dialog's default is No). Directives in the prompt
 * text (`[fake:bash …]`, `[fake:ask]`, `[fake:status 500]`, `[fake:hang]`) choose the model's answer per
 * turn. One fake model for the file; the scenarios run one after another, several on one launch where the
 * scenario before leaves the agent where the next starts (a launch is the costly part). Each scenario keeps the screen
 * it asserts on under test-results/agent-screens/<version>/ as evidence.
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

const userTurns = () => fake.turns().map((t) => t.userText);
/** The tool results the last message of a request carries (Claude Code's side requests carry their own). */
function toolResults(body: unknown): string {
  const last = ((body as { messages?: { role: string; content: unknown }[] }).messages ?? []).filter((m) => m.role === 'user').at(-1);
  const blocks = Array.isArray(last?.content) ? (last.content as { type: string; content?: unknown }[]) : [];
  return JSON.stringify(blocks.filter((b) => b.type === 'tool_result').map((b) => b.content));
}
/** The requests one claude session made (each carries its session id in its metadata). */
const requestsOf = (agentSessionId: string | null) => fake.requests.filter((r) => agentSessionId && JSON.stringify((r.body as { metadata?: unknown }).metadata ?? '').includes(agentSessionId));
/**
 * A poll of `session show` for a fact a hook, the prompt or a serve writes to the session's log: the CLI
 * (a Node start) runs again only once the log's ref moved (one git read per poll). Not for what `show`
 * itself finds out (a tmux session gone, a dialog read from the pane with no serve up).
 */
function logShow(p: AgentProject, id: string): () => Promise<SessionShow> {
  let tip: string | undefined;
  let last: SessionShow | undefined;
  return async () => {
    const now = git(p.dir, 'rev-parse', `refs/trellis/sessions/${id}`).trim();
    if (now !== tip || last === undefined) {
      last = await p.show(id);
      tip = now;
    }
    return last;
  };
}
const AGENT_MS = 45_000;
/** A shell command every version asks about (2.1.331's auto mode lets a plain `touch` run unasked). */
const risky = (then: string) => `[fake:bash curl -s http://127.0.0.1:9/ | sh; ${then}]`;

/** The screen of a session, kept as the scenario's evidence. */
function evidence(version: ClaudeVersion, name: string, screen: string): string {
  const dir = join(ROOT, 'test-results', 'agent-screens', version);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.txt`), `${screen}\n`);
  return screen;
}

describe.each(CLAUDE_VERSIONS)('the real claude %s', (version) => {
  function project(setup: { trustProject?: boolean } = {}): AgentProject {
    const p = agentProject(fake, { ...setup, claudeVersion: version });
    projects.push(p);
    return p;
  }
  const answer = (p: AgentProject, id: string, choice: string) => ok(p.dir, ['session', 'answer', id, choice, '--json'], { env: p.env }).then((o) => JSON.parse(o) as { chose: string; options: string[] });
  /** With a serve: its pane reader says what no hook says (a dialog before its notification, Esc). */
  async function served(p: AgentProject, run: (serve: ServeProcess) => Promise<void>): Promise<void> {
    writeFileSync(join(p.dir, 'trellis.json'), '{}\n');
    const serve = await startServe(ROOT, p.dir, p.env);
    try {
      await run(serve);
    } finally {
      await serve.stop();
    }
  }

  // Two scenarios on one launch (each was a launch of its own; the test's time is theirs together).
  it('one launch, two scenarios: untrusted folder: awaiting{setup} naming the trust dialog; trust answered by name (not Enter, which 2.1.331 reads as "No, exit"); the version is on the log; then three 5xx turns in a row quarantine the session (outside the hook; the idle notices between them never reset the count)', async () => {
    const p = project({ trustProject: false });
    const id = await p.spawn('Work here [fake:ask]', 'claude');
    const state = logShow(p, id);
    await waitFor('awaiting{setup}', async () => (await p.show(id)).reason === 'setup', AGENT_MS);
    expect(await p.show(id)).toMatchObject({ state: 'awaiting', source: 'pane', detail: expect.stringContaining('workspace trust') });
    expect(evidence(version, 'untrusted-folder', p.screen(id))).toContain('Yes, I trust this folder');
    expect((await p.show(id)).agentVersion).toBe(version);
    expect(await ok(p.dir, ['session', 'show', id], { env: p.env })).toContain(`claude ${version} ·`);
    expect(await answer(p, id, 'trust')).toMatchObject({ chose: 'Yes, I trust this folder' });
    const claudeState = () => JSON.parse(readFileSync(join(p.agent.home, '.claude.json'), 'utf8')) as { projects?: Record<string, { hasTrustDialogAccepted?: boolean }> };
    await waitFor('the trust to be recorded', () => claudeState().projects?.[p.dir]?.hasTrustDialogAccepted === true, AGENT_MS);

    // Question: the agent's own AskUserQuestion, answered by the option's text.
    await waitFor('awaiting{question}', async () => (await p.show(id)).reason === 'question', AGENT_MS);
    evidence(version, 'question', p.screen(id));
    expect(await answer(p, id, 'Blue')).toMatchObject({ chose: 'Blue' });
    // The turn's end is the agent's own (its Stop hook, after the tool result went out), never the input
    // box Claude Code shows for a moment between the question and its next request.
    await waitFor('the answered turn to end', async () => (await state()).reason === 'turn-end', AGENT_MS);
    const answered = requestsOf((await p.show(id)).agentSessionId).filter((r) => r.kind === 'tool-result').map((r) => toolResults(r.body));
    expect(answered.some((t) => t.includes('Blue')), `the tool results the model got: ${JSON.stringify(answered)}; the log: ${JSON.stringify(p.log(id))}`).toBe(true);
    expect(p.log(id).filter((l) => l.startsWith('await turn-end')), `the log: ${JSON.stringify(p.log(id))}`).toEqual(['await turn-end (hook)']);

    // Scenario "three 5xx turns in a row quarantine the session" (outside the hook; the idle notices between them never reset the count).
    const failures = async (n: number) => {
      const s = await state();
      return s.turnFailures === n && s.state === 'awaiting' ? s : null;
    };
    await ok(p.dir, ['session', 'prompt', id, '--body', 'First [fake:status 500]'], { env: p.env });
    const first = await waitFor('5xx: failure 1', () => failures(1), AGENT_MS);
    expect(first, '5xx').toMatchObject({ reason: 'turn-end', detail: expect.stringMatching(/^the turn failed: server_error/) });
    const second = await ok(p.dir, ['session', 'prompt', id, '--body', 'Second [fake:status 500]', '--json'], { env: p.env });
    await waitFor('5xx: failure 2', () => failures(2), AGENT_MS).catch((e: Error) => {
      throw new Error(`${e.message}; prompt: ${second}; log: ${p.log(id).join(' | ')}; screen: ${p.screen(id)}`);
    });
    evidence(version, 'failed-turns', p.screen(id));
    // Interrupted and resumed: the streak goes on (the resumed agent idle at its input has ended no turn).
    await ok(p.dir, ['session', 'interrupt', id], { env: p.env });
    await ok(p.dir, ['session', 'resume', id], { env: p.env });
    await waitFor('5xx: the resumed agent at its input', async () => (await p.show(id)).state === 'awaiting', AGENT_MS).catch((e: Error) => {
      throw new Error(`${e.message}; log: ${p.log(id).join(' | ')}; screen: ${p.screen(id)}`);
    });
    expect((await p.show(id)).turnFailures, '5xx').toBe(2);
    await ok(p.dir, ['session', 'prompt', id, '--body', 'Third [fake:status 500]'], { env: p.env });
    await waitFor('5xx: the quarantine', async () => (await state()).state === 'quarantined', AGENT_MS).catch((e: Error) => {
      throw new Error(`${e.message}; log: ${p.log(id).join(' | ')}; screen: ${p.screen(id)}`);
    });
    expect(await p.show(id), '5xx').toMatchObject({ state: 'quarantined', reason: '3 turn failures in a row', source: 'supervisor', turnFailures: 3 });
  }, 120_000);

  // Three scenarios on one launch (each of them was a launch of its own; the test's time is theirs together).
  it('one launch, three scenarios (no serve): trusted worktree never stops at a trust dialog; then a prompt sent while a dialog is on screen that no hook announced yet: not delivered, said so, nothing typed into the dialog; then a killed tmux session is said as tmux-gone, not a process exit', async () => {
    // Scenario "trusted worktree": a session in a project whose main checkout claude trusts never stops at a trust dialog.
    const p = project();
    const id = await p.spawn('Say hi', 'claude');
    const state = logShow(p, id);
    await waitFor('trusted worktree: the turn to end', async () => (await state()).reason === 'turn-end', AGENT_MS);
    expect(evidence(version, 'trusted-worktree', p.screen(id))).not.toContain('trust this folder');
    expect(p.log(id).filter((l) => l.startsWith('await setup'))).toEqual([]);

    // Scenario "a prompt during an unannounced dialog" (no serve): not delivered, said so; nothing typed into the dialog.
    expect(await ok(p.dir, ['session', 'prompt', id, '--body', `Run it ${risky('touch never-file')}`], { env: p.env })).toContain('prompted (delivered)');
    // 2.1.331: the auto-mode dialog, whose only hook comes 6–7 s later; 2.1.197: its Bash dialog.
    await waitFor('unannounced dialog: the dialog on screen', () => /Enter to stay in auto mode|Do you want to proceed\?/.test(p.screen(id)), AGENT_MS);
    const r = JSON.parse(await ok(p.dir, ['session', 'prompt', id, '--body', 'ACC-NOTYPE', '--json'], { env: p.env })) as { delivered: boolean; reason?: string };
    expect(r, 'unannounced dialog').toMatchObject({ delivered: false, reason: expect.stringMatching(/^the agent shows a permission dialog/) });
    expect(await p.show(id), 'unannounced dialog').toMatchObject({ state: 'awaiting', reason: 'permission' });
    expect(evidence(version, 'prompt-during-dialog', p.screen(id))).toMatch(/Enter to stay in auto mode|Do you want to proceed\?/);
    expect(p.screen(id), 'unannounced dialog').not.toContain('ACC-NOTYPE');
    expect(userTurns(), 'unannounced dialog').not.toContain('ACC-NOTYPE');

    // Scenario "a killed tmux session": said as tmux-gone, not a process exit.
    tmux(p.home, 'kill-session', '-t', `=${id}`);
    await waitFor('killed tmux: interrupted', async () => (await p.show(id)).state === 'interrupted', AGENT_MS);
    expect(await p.show(id), 'killed tmux').toMatchObject({ state: 'interrupted', reason: 'tmux-gone' });
  }, 120_000);

  it('permission approved by name, then denied by name: a prompt meanwhile is held, never typed into the dialog', async () => {
    const p = project();
    await served(p, async () => {
      // Scenario "permission approved by name, then denied by name".
      const id = await p.spawn(`Touch a file ${risky('touch approved-file')}`, 'claude');
      const state = logShow(p, id);
      await waitFor('permission: awaiting{permission}', async () => (await state()).reason === 'permission', AGENT_MS);
      const first = await p.show(id);
      if (version !== '2.1.197') {
        // Auto mode through a gateway: its dialog, read from the pane before its 6–7 s late notification.
        expect(first).toMatchObject({ state: 'awaiting', source: 'pane', detail: expect.stringMatching(/^auto mode:/) });
        evidence(version, 'auto-mode-dialog', p.screen(id));
        // A prompt now is held, not typed into the dialog.
        expect(await ok(p.dir, ['session', 'prompt', id, '--body', 'Then say the magic word'], { env: p.env })).toMatch(/prompt queued, not delivered: the agent shows a permission dialog/);
        await answer(p, id, 'approve');
        await waitFor('permission: the Bash dialog', async () => /Do you want to proceed\?/.test(String((await state()).detail ?? '')), AGENT_MS);
      } else {
        expect(await ok(p.dir, ['session', 'prompt', id, '--body', 'Then say the magic word'], { env: p.env })).toMatch(/prompt queued, not delivered: the agent shows a permission dialog/);
      }
      expect(evidence(version, 'permission-dialog', p.screen(id))).toMatch(/Do you want to proceed\?/);
      expect(await answer(p, id, 'approve')).toMatchObject({ chose: 'Yes' });
      const worktree = (await p.show(id)).worktree;
      // Confined (the default), claude reaches no serve even with one online: every hook is a command,
      // whose signal goes out through the sandbox's relay (issue 45: POSTed with curl, issue 40), never a POST to the loopback API.
      const hooks = (JSON.parse(readFileSync(join(worktree, '.claude/settings.local.json'), 'utf8')) as { hooks: Record<string, [{ hooks: [{ type: string; command?: string }] }]> }).hooks;
      expect(hooks.Stop![0].hooks[0]).toMatchObject({ type: 'command', command: expect.stringMatching(new RegExp(`^sh "\\$\\{TRELLIS_SIGNAL_RELAY%/\\*\\}/signal\\.sh" .* session signal ${id} Stop \\|\\| exit 1$`)) });
      expect(hooks.SessionStart![0].hooks[0].type).toBe('command');
      await waitFor('permission: the approved command to run', () => existsSync(join(worktree, 'approved-file')), AGENT_MS);
      await waitFor('permission: the held prompt to reach the model', () => userTurns().includes('Then say the magic word'), AGENT_MS);
      await waitFor('permission: its turn to end', async () => {
        const s = await state();
        return s.state === 'awaiting' && s.reason === 'turn-end' && s.pending === 0;
      }, AGENT_MS);

      await ok(p.dir, ['session', 'prompt', id, '--body', `Again ${risky('touch denied-file')}`], { env: p.env });
      await waitFor('permission: awaiting{permission} again', async () => (await state()).reason === 'permission', AGENT_MS);
      await waitFor('permission: the Bash dialog again', () => /Do you want to proceed\?/.test(p.screen(id)), AGENT_MS);
      evidence(version, 'permission-deny', p.screen(id));
      expect(await answer(p, id, 'deny')).toMatchObject({ chose: 'No' });
      await waitFor('permission: the denied turn back at its input', async () => (await state()).reason === 'turn-end', AGENT_MS);
      expect(existsSync(join(worktree, 'denied-file'))).toBe(false);

    });
  });

  // Three scenarios on one launch (the 401 last: a prompt is held while the agent awaits its login) (each of them was a launch of its own; the test's time is theirs together).
  it('one launch with a serve, three scenarios: Escape mid-turn, then a held prompt (the restored prompt is cleared first and the model receives exactly the held prompt); then one lane for every input ("/clear" typed into the box, then a prompt: it waits for an empty box and says so; cleared by the person, the model receives the prompt alone); then a 401 is awaiting{auth} naming the login problem within seconds', async () => {
    const p = project();
    await served(p, async () => {
      // Scenario "Escape mid-turn, then a held prompt".
      const id = await p.spawn('Take your time ACC-SLOW [fake:hang]', 'claude');
      const state = logShow(p, id);
      await waitFor('escape: the turn to run', async () => (await state()).state === 'running' && /esc to interrupt/.test(p.screen(id)), AGENT_MS);
      expect(await ok(p.dir, ['session', 'prompt', id, '--body', 'ACC-HELD exactly this'], { env: p.env }), 'escape').toContain('prompt queued, not delivered');
      await ok(p.dir, ['session', 'keys', id, 'Escape'], { env: p.env });
      await waitFor('escape: the held prompt to reach the model', () => userTurns().some((t) => t.includes('ACC-HELD')), AGENT_MS);
      expect(userTurns().filter((t) => t.includes('ACC-HELD')), 'escape').toEqual(['ACC-HELD exactly this']);
      evidence(version, 'escape-then-held', p.screen(id));
      await waitFor('escape: its turn to end', async () => (await state()).reason === 'turn-end', AGENT_MS);

      // Scenario "one lane for every input": "/clear" typed into the box, then a prompt.
      await ok(p.dir, ['session', 'keys', id, '--hex', Buffer.from('/clear').toString('hex')], { env: p.env });
      await waitFor('one lane: the typed text in the box', () => /❯\s\/clear/.test(evidence(version, 'typed-into-box', p.screen(id))), AGENT_MS);
      const child = spawn(process.execPath, [BIN, 'session', 'prompt', id, '--body', `hello ACC-NOTYPE-${version}`, '--json'], { cwd: p.dir, env: p.env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((r) => child.on('close', r));
      await waitFor('one lane: the prompt to say it waits', () => /waiting: the agent's input box holds "\/clear", which someone is typing/.test(stderr), AGENT_MS);
      evidence(version, 'prompt-waits-for-typing', p.screen(id));
      // The person clears what they typed (Ctrl-U): the prompt goes in alone.
      await ok(p.dir, ['session', 'keys', id, 'C-u'], { env: p.env });
      expect(await exited, 'one lane').toBe(0);
      expect(JSON.parse(stdout), 'one lane').toMatchObject({ delivered: true, waited: expect.stringContaining('"/clear"') });
      await waitFor('one lane: the prompt to reach the model', () => userTurns().some((t) => t.includes(`ACC-NOTYPE-${version}`)), AGENT_MS);
      expect(userTurns().filter((t) => t.includes(`ACC-NOTYPE-${version}`)), 'one lane').toEqual([`hello ACC-NOTYPE-${version}`]);
      expect(p.screen(id), 'one lane').not.toContain('Unknown command');

      // Scenario "a 401": awaiting{auth} naming the login problem within seconds (last: a prompt is held while it awaits the login).
      const asked = Date.now();
      await ok(p.dir, ['session', 'prompt', id, '--body', 'Hello [fake:status 401]'], { env: p.env });
      await waitFor('401: awaiting{auth}', async () => (await state()).reason === 'auth', AGENT_MS);
      expect(await p.show(id), '401').toMatchObject({ state: 'awaiting', reason: 'auth', source: 'hook', turnFailures: 0, detail: expect.stringMatching(/^authentication_failed: .*\(log in/) });
      // Before the idle prompt's minute, so it is the StopFailure hook that said it, not the idle notice.
      expect(Date.now() - asked, '401').toBeLessThan(55_000);
    });
  }, 180_000);

});

// The oldest supported version only: the same hooks on both (replayed in the adapter table), 20 s of real agent.
describe('the real claude: the program stays', () => {
  const project = (): AgentProject => {
    const p = agentProject(fake);
    projects.push(p);
    return p;
  };
  it('/resume inside claude leaves the session live: the next prompt is a turn of the same program', async () => {
    const p = project();
    const id = await p.spawn('Say hi', 'claude');
    await waitFor('the first turn to end', async () => (await p.show(id)).reason === 'turn-end', AGENT_MS);
    const { agentSessionId } = await p.show(id);
    await ok(p.dir, ['session', 'prompt', id, '--body', `/resume ${agentSessionId}`], { env: p.env });
    // The prompt made it `running`; SessionEnd{resume} leaves it live and SessionStart{resume} finds it idle at its input.
    // The transitions (a turn's usage record, written as its hook reads the transcript, may land after the next prompt's `run`).
    const log = () => git(p.dir, 'log', '--reverse', '--format=%s', `refs/trellis/sessions/${id}`).trim().split('\n').filter((l) => !l.startsWith('usage: '));
    await waitFor('awaiting{turn-end} after the /resume', () => log().at(-1) === 'await turn-end (hook)' && log().at(-2) === 'run (user)', AGENT_MS).catch((e: Error) => {
      throw new Error(`${e.message}; log: ${log().join(' | ')}; screen: ${p.screen(id)}`);
    });
    expect(log().slice(-3)).toEqual([`prompt: /resume ${agentSessionId}`, 'run (user)', 'await turn-end (hook)']);
    const after = await ok(p.dir, ['session', 'prompt', id, '--body', 'Still there?'], { env: p.env });
    expect(after).toContain('prompted (delivered)');
    const said = (e: Error) => {
      throw new Error(`${e.message}; the turns the model got: ${JSON.stringify(userTurns().slice(-3))}; log: ${log().join(' | ')}; screen: ${p.screen(id)}`);
    };
    await waitFor('the next turn to reach the model', () => userTurns().includes('Still there?'), AGENT_MS).catch(said);
    await waitFor('its turn to end', async () => (await p.show(id)).reason === 'turn-end', AGENT_MS).catch(said);
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
