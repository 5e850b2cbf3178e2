import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { BIN, cleanupRepos, git, ok, ROOT, tempDir, trellis } from './helpers/repo.js';
import { startServe } from './helpers/serve.js';
import { killTmux, standinClaudeProject, tmuxHas, waitFor } from './helpers/sessions.js';

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) killTmux(h);
});
afterAll(() => cleanupRepos());

/** A project whose PATH finds the stand-in as `claude` (unconfined: these tests are of the hook protocol). */
function project(): { dir: string; home: string; env: NodeJS.ProcessEnv } {
  const p = standinClaudeProject();
  homes.push(p.home);
  return p;
}

const standinLog = (home: string, id: string): Record<string, unknown>[] => {
  const path = join(home, 'standin', `${id}.log`);
  return existsSync(path) ? readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l)) : [];
};

describe('the claude adapter, with a stand-in agent speaking Claude Code’s hook protocol', () => {
  it('Stop, permission and idle notifications, SessionStart and resume map to the session states', async () => {
    const { dir, home, env } = project();
    const show = async (id: string) => JSON.parse(await ok(dir, ['session', 'show', id, '--json'], { env }));
    const types = (id: string) => git(dir, 'log', '--reverse', '--format=%s', `refs/trellis/sessions/${id}`).trim().split('\n');

    const id = JSON.parse(await ok(dir, ['session', 'spawn', 'Fix the login form', '--harness', 'claude', '--json'], { env })).id;
    const { worktree } = await show(id);
    // Hooks are written into the worktree's local settings, calling `trellis session signal` (through the recorder's shell program: issue 40).
    const settings = JSON.parse(readFileSync(join(worktree, '.claude/settings.local.json'), 'utf8'));
    expect(Object.keys(settings.hooks).sort()).toEqual(['Notification', 'PermissionRequest', 'PostToolUse', 'PostToolUseFailure', 'SessionEnd', 'SessionStart', 'Stop', 'StopFailure', 'UserPromptSubmit']);
    // The hooks file stays out of the agent's work: excluded in the worktree's git exclude file.
    expect(git(worktree, 'status', '--porcelain', '--untracked-files=all').trim()).toBe('');
    const exclude = git(worktree, 'rev-parse', '--git-path', 'info/exclude').trim();
    expect(readFileSync(resolve(worktree, exclude), 'utf8')).toContain('/.claude/settings.local.json\n');
    const written = statSync(join(worktree, '.claude/settings.local.json')).mtimeMs;
    expect(settings.hooks.Stop[0].hooks[0].command).toMatch(new RegExp(`^sh '.*/signal\\.sh' .* session signal ${id} Stop \\|\\| exit 1$`));

    // The task is the launch prompt: SessionStart records the agent's id; the turn ends with Stop.
    await waitFor('the first turn to end', async () => (await show(id)).state === 'awaiting');
    const first = await show(id);
    const log = standinLog(home, id);
    expect(log[0]).toEqual({ started: ['--', 'Fix the login form'] });
    expect(first).toMatchObject({ state: 'awaiting', reason: 'turn-end', source: 'hook', unread: true, agentSessionId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(log.filter((l) => 'hook' in l).every((l) => l.status === 0)).toBe(true);

    // A Stop, then the idle notification that only repeats it: one awaiting, nothing more.
    const before = types(id).length;
    await ok(dir, ['session', 'prompt', id, '--body', 'stop then idle'], { env });
    await waitFor('the idle notification to have run', () => standinLog(home, id).filter((l) => l.hook === 'Notification').length === 1);
    expect(types(id).slice(before)).toEqual(['prompt: stop then idle', 'run (user)', 'await turn-end (hook)']);
    expect(await show(id)).toMatchObject({ state: 'awaiting', reason: 'turn-end' });

    // A permission prompt.
    await ok(dir, ['session', 'prompt', id, '--body', 'ask permission'], { env });
    await waitFor('awaiting{permission}', async () => (await show(id)).reason === 'permission');
    expect(await show(id)).toMatchObject({ state: 'awaiting', reason: 'permission', source: 'hook' });

    // Interrupt, then resume: relaunched with --resume and the recorded agent session id; with no prompt
    // to run, it ends idle at its input: awaiting{turn-end}.
    await ok(dir, ['session', 'interrupt', id], { env });
    expect(tmuxHas(home, id)).toBe(false);
    expect(await show(id)).toMatchObject({ state: 'interrupted', reason: 'by-user', source: 'user' });
    await ok(dir, ['session', 'resume', id], { env });
    await waitFor('the stand-in to start again', () => standinLog(home, id).filter((l) => 'started' in l).length === 2);
    expect(standinLog(home, id).filter((l) => 'started' in l)[1]).toEqual({ started: [`--resume=${first.agentSessionId}`] });
    await waitFor('its SessionStart hook to run', () => standinLog(home, id).filter((l) => l.hook === 'SessionStart').length === 2);
    expect(await show(id)).toMatchObject({ state: 'awaiting', reason: 'turn-end', source: 'hook', agentSessionId: first.agentSessionId });
    // The relaunch rewrote nothing: the hooks' content did not change (Claude Code reloads on every write).
    expect(statSync(join(worktree, '.claude/settings.local.json')).mtimeMs).toBe(written);

    // /resume inside the agent ends one conversation and starts the next in the same live program.
    await ok(dir, ['session', 'prompt', id, '--body', '/resume'], { env });
    await waitFor('its SessionEnd{resume} and SessionStart{resume}', () => standinLog(home, id).filter((l) => l.hook === 'SessionStart').length === 3);
    expect(await show(id)).toMatchObject({ state: 'awaiting', reason: 'turn-end' });

    // Merge: the agent reads prose, so the merge prompt is typed into it (it waits for a prompt); its turn's
    // Stop is followed while the session stays the user's (merging).
    await ok(dir, ['session', 'review', id], { env });
    expect(await ok(dir, ['session', 'merge', id], { env })).toBe(`merge dispatched to ${id}'s agent\n`);
    await waitFor('the merge prompt typed into the agent', () => standinLog(home, id).some((l) => typeof l.prompt === 'string' && l.prompt.startsWith(`Merge your branch trellis/${id} into main`)));
    await waitFor('its Stop followed in merging', async () => (await show(id)).waiting === 'turn-end');
    expect(await show(id)).toMatchObject({ state: 'merging', waiting: 'turn-end' });

    // /exit ends the agent: SessionEnd, then the pane dies; the close saves nothing needless (the hooks file is ours).
    await ok(dir, ['session', 'prompt', id, '--body', '/exit'], { env });
    await waitFor('interrupted{process-exit}', async () => (await show(id)).state === 'interrupted');
    expect(await show(id)).toMatchObject({ reason: 'process-exit' });
    const closed = JSON.parse(await ok(dir, ['session', 'close', id, '--json'], { env }));
    expect(closed).toMatchObject({ state: 'closed', wip: null });
  });

  it('unknown or malformed hook input is logged and ignored (exit 0, state unchanged); a login failure is awaiting{auth}; three failed turns in a row quarantine', async () => {
    const { dir, home, env } = project();
    const show = async (id: string) => JSON.parse(await ok(dir, ['session', 'show', id, '--json'], { env }));
    const id = (await ok(dir, ['session', 'spawn', 'x', '--harness', 'claude'], { env })).trim();
    await waitFor('the first turn to end', async () => (await show(id)).state === 'awaiting');
    const before = await show(id);
    const unknown = await trellis(dir, ['session', 'signal', id, 'Explode'], { env, input: '{}' });
    expect(unknown).toMatchObject({ code: 0, stderr: expect.stringContaining('ignored Explode signal: unknown signal') });
    expect(unknown.stderr).toContain('SessionStart, UserPromptSubmit, PermissionRequest');
    const garbled = await trellis(dir, ['session', 'signal', id, 'Stop'], { env, input: '{"hook_event_name": "Sto' });
    expect(garbled).toMatchObject({ code: 0, stderr: expect.stringContaining('not JSON') });
    const wrong = await trellis(dir, ['session', 'signal', id, 'PermissionRequest'], { env, input: '{"hook_event_name":"Stop"}' });
    expect(wrong).toMatchObject({ code: 0, stderr: expect.stringContaining('carried a "Stop" payload') });
    // A hook of a program Trellis replaced (its old pane, e.g. the SessionEnd of an interrupted agent
    // landing after the resume) is ignored: tmux names the pane in the hook's environment.
    const fromOldPane = { ...env, TMUX: `${join(home, 'tmux.sock')},1,0`, TMUX_PANE: '%99' };
    const stale = await trellis(dir, ['session', 'signal', id, 'SessionEnd'], { env: fromOldPane, input: '{"hook_event_name":"SessionEnd","reason":"other"}' });
    expect(stale).toMatchObject({ code: 0, stderr: expect.stringContaining('sent from pane %99') });
    expect(await show(id)).toEqual(before);
    const logged = readFileSync(join(home, 'signals.log'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(logged.map((l) => l.event)).toEqual(['Explode', 'Stop', 'PermissionRequest', 'SessionEnd']);

    // Claude Code's StopFailure for a missing login: at once the state that names it, not a failure count.
    await ok(dir, ['session', 'prompt', id, '--body', 'fail authentication_failed'], { env });
    await waitFor('awaiting{auth}', async () => (await show(id)).reason === 'auth');
    expect(await show(id)).toMatchObject({ state: 'awaiting', reason: 'auth', source: 'hook', turnFailures: 0, detail: expect.stringMatching(/^authentication_failed: Not logged in · Please run \/login \(log in/) });
    // A prompt while it cannot log in is held (answering the login is for raw keys).
    expect(await ok(dir, ['session', 'prompt', id, '--body', 'are you there'], { env })).toContain('prompt queued, not delivered: the agent cannot use its provider');
    expect(standinLog(home, id).some((l) => l.prompt === 'are you there')).toBe(false);
    // The user logs in and prompts by hand: a turn that ends well delivers the held prompt.
    await ok(dir, ['session', 'signal', id, 'busy'], { env, input: '' });
    await ok(dir, ['session', 'signal', id, 'turn-end'], { env, input: '' });
    await waitFor('the held prompt delivered', () => standinLog(home, id).some((l) => l.prompt === 'are you there'));

    // Three server errors in a row: each turn fails (its idle notice after it never resets the count).
    for (let i = 1; i <= 3; i++) {
      await waitFor('the agent to take a prompt', async () => (await show(id)).reason === 'turn-end' && (await show(id)).pending === 0);
      await ok(dir, ['session', 'prompt', id, '--body', 'fail server_error'], { env });
      if (i < 3) await waitFor(`failure ${i}`, async () => (await show(id)).turnFailures === i);
    }
    await waitFor('the quarantine', async () => (await show(id)).state === 'quarantined');
    expect(await show(id)).toMatchObject({ state: 'quarantined', reason: '3 turn failures in a row', source: 'supervisor' });
    await ok(dir, ['session', 'close', id], { env });
  });

  it('a prompt during a dialog is never typed into it: held, then delivered once the agent takes input; AskUserQuestion is a question', async () => {
    const { dir, home, env } = project();
    const show = async (id: string) => JSON.parse(await ok(dir, ['session', 'show', id, '--json'], { env }));
    const id = (await ok(dir, ['session', 'spawn', 'ask permission', '--harness', 'claude'], { env })).trim();
    await waitFor('awaiting{permission}', async () => (await show(id)).reason === 'permission');
    const held = JSON.parse(await ok(dir, ['session', 'prompt', id, '--body', 'then do this', '--json'], { env }));
    expect(held).toMatchObject({ appended: true, delivered: false, reason: expect.stringMatching(/^the agent shows a permission dialog.*delivered when the agent next waits for input$/) });
    expect(held.session.timeline).toEqual([expect.objectContaining({ body: 'then do this', held: held.reason })]);
    expect(await ok(dir, ['session', 'prompt', id, '--body', 'and this'], { env })).toMatch(/prompt queued, not delivered: earlier prompts wait/);
    // Nothing reached the dialog.
    expect(standinLog(home, id).filter((l) => 'dialogAnswer' in l)).toEqual([]);
    // The person answers the dialog with a raw key; the tool runs (running), the turn ends (Stop ends the
    // wait): the held prompts go in, in order, one per turn.
    await ok(dir, ['session', 'keys', id, 'Enter'], { env });
    await waitFor('both held prompts delivered', () => standinLog(home, id).filter((l) => l.prompt === 'then do this' || l.prompt === 'and this').length === 2);
    expect(standinLog(home, id).filter((l) => 'dialogAnswer' in l || 'prompt' in l)).toEqual([{ prompt: 'ask permission' }, { dialogAnswer: '' }, { prompt: 'then do this' }, { prompt: 'and this' }]);
    await waitFor('awaiting{turn-end}', async () => (await show(id)).reason === 'turn-end');
    const after = await show(id);
    expect(after).toMatchObject({ state: 'awaiting', reason: 'turn-end', pending: 0 });
    expect(after.timeline.map((t: { body: string; held?: string }) => [t.body, t.held])).toEqual([['then do this', undefined], ['and this', undefined]]);
    const types = git(dir, 'log', '--reverse', '--format=%s', `refs/trellis/sessions/${id}`).trim().split('\n');
    expect(types.filter((t) => /^(deliver|await permission|run \(hook\))/.test(t))).toEqual([
      // SessionStart: the agent is up.
      'run (hook)',
      'await permission (hook)',
      'run (hook)',
      'deliver prompt 1 (supervisor)',
      'deliver prompt 2 (supervisor)',
    ]);

    // Claude's own AskUserQuestion tool: a question (its dialog is announced as a permission prompt).
    await ok(dir, ['session', 'prompt', id, '--body', 'ask question'], { env });
    await waitFor('awaiting{question}', async () => (await show(id)).reason === 'question');
    await waitFor('its permission_prompt notification', () => standinLog(home, id).filter((l) => l.hook === 'Notification').length === 2);
    expect(await show(id)).toMatchObject({ state: 'awaiting', reason: 'question', source: 'hook' });
    await ok(dir, ['session', 'keys', id, 'Enter'], { env });
    await waitFor('the answered question’s turn to end', async () => (await show(id)).reason === 'turn-end');
    await ok(dir, ['session', 'close', id], { env });
  });

  it('one lane for every input: a prompt sent while a person has typed into the box (session keys) waits for an empty box, says so, and goes in alone', async () => {
    const { dir, home, env } = project();
    const show = async (id: string) => JSON.parse(await ok(dir, ['session', 'show', id, '--json'], { env }));
    const id = (await ok(dir, ['session', 'spawn', 'first task', '--harness', 'claude'], { env })).trim();
    await waitFor('awaiting{turn-end}', async () => (await show(id)).reason === 'turn-end');
    // A person (or a key command) types '/clear' into the box, no Enter yet.
    await ok(dir, ['session', 'keys', id, '--hex', Buffer.from('/clear').toString('hex')], { env });
    await waitFor('the typed text in the box', async () => /❯ \/clear/.test(await ok(dir, ['session', 'capture', id], { env })));
    // The prompt, from another process: it waits, and says so at once (before: '/clear' was wiped, or the prompt pasted onto it).
    const child = spawn(process.execPath, [BIN, 'session', 'prompt', id, '--body', 'hello ACC-NOTYPE', '--json'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('close', r));
    await waitFor('the prompt to say it waits', () => /waiting: the agent's input box holds "\/clear", which someone is typing: the prompt waits for an empty box/.test(stderr));
    expect(standinLog(home, id).filter((l) => 'prompt' in l)).toEqual([{ prompt: 'first task' }]);
    // The person submits their text: their turn, then the prompt alone.
    await ok(dir, ['session', 'keys', id, 'Enter'], { env });
    expect(await exited).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ appended: true, delivered: true, waited: expect.stringContaining('"/clear"') });
    await waitFor('both lines reached the agent', () => standinLog(home, id).filter((l) => 'prompt' in l).length === 3);
    expect(standinLog(home, id).filter((l) => 'prompt' in l)).toEqual([{ prompt: 'first task' }, { prompt: '/clear' }, { prompt: 'hello ACC-NOTYPE' }]);
    await ok(dir, ['session', 'close', id], { env });
  });

  it('loop-in: a reply on a thread the session opened reaches the agent with its text, held while it shows a dialog', async () => {
    const { dir, home, env } = project();
    const show = async (id: string) => JSON.parse(await ok(dir, ['session', 'show', id, '--json'], { env }));
    const id = (await ok(dir, ['session', 'spawn', 'ask permission', '--harness', 'claude'], { env })).trim();
    await waitFor('awaiting{permission}', async () => (await show(id)).reason === 'permission');
    const thread = (await ok(dir, ['issue', 'open', 'Is the cache right?', '--by', id], { env })).trim();
    await ok(dir, ['issue', 'reply', thread, '--body', 'Yes: keep it', '--by', 'ann'], { env });
    expect((await show(id)).timeline).toEqual([{ by: 'trellis', at: expect.any(String), body: `Reply from ann on issue "Is the cache right?" ${thread}:\n\nYes: keep it\n\n(answer on the thread: trellis issue reply ${thread} --body ...)`, held: expect.stringContaining('permission dialog') }]);
    expect(standinLog(home, id).filter((l) => 'dialogAnswer' in l)).toEqual([]);
    await ok(dir, ['session', 'keys', id, 'Enter'], { env });
    // The stand-in reads lines: the reply's lines arrive as it typed them.
    await waitFor('the reply typed into the agent', () => standinLog(home, id).some((l) => l.prompt === 'Yes: keep it'));
    expect(standinLog(home, id).filter((l) => 'prompt' in l)[1]).toEqual({ prompt: `Reply from ann on issue "Is the cache right?" ${thread}:` });
    await ok(dir, ['session', 'close', id], { env });
  });

  it('loop-in through the API: a reply POSTed to the backend reaches the session as the CLI’s does', async () => {
    const { dir, home, env } = project();
    const show = async (id: string) => JSON.parse(await ok(dir, ['session', 'show', id, '--json'], { env }));
    const id = (await ok(dir, ['session', 'spawn', 'Fix the login form', '--harness', 'claude'], { env })).trim();
    await waitFor('the first turn to end', async () => (await show(id)).reason === 'turn-end');
    const thread = (await ok(dir, ['issue', 'open', 'Is the cache right?', '--by', id], { env })).trim();
    // A trellis.json makes this folder the project served (outside one, serve runs the demo).
    writeFileSync(join(dir, 'trellis.json'), '{}\n');
    const served = await startServe(ROOT, dir, env);
    try {
      const res = await fetch(new URL(`/api/issues/${thread}/reply`, served.url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ body: 'Yes: keep it', by: 'ann' }) });
      const body = (await res.json()) as { loopedIn?: string | null };
      expect([res.status, body.loopedIn], JSON.stringify(body)).toEqual([200, id]);
      await waitFor('the reply typed into the agent', () => standinLog(home, id).some((l) => l.prompt === 'Yes: keep it'));
    } finally {
      await served.stop('SIGTERM');
    }
    await ok(dir, ['session', 'close', id], { env });
  });

  it('answers by name through the API: a choice the dialog does not offer is refused naming its options; a selection the screen does not follow is never confirmed; approve is confirmed on "Yes"', async () => {
    const { dir, home, env } = project();
    const show = async (id: string) => JSON.parse(await ok(dir, ['session', 'show', id, '--json'], { env }));
    const id = (await ok(dir, ['session', 'spawn', 'ask permission', '--harness', 'claude'], { env })).trim();
    await waitFor('awaiting{permission}', async () => (await show(id)).reason === 'permission');
    writeFileSync(join(dir, 'trellis.json'), '{}\n');
    const served = await startServe(ROOT, dir, env);
    const answer = async (choice: string) => {
      const res = await fetch(new URL(`/api/sessions/${id}/answer`, served.url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ choice }) });
      return { status: res.status, body: (await res.json()) as { chose?: string; error?: { code: string; message: string } } };
    };
    const answered = () => standinLog(home, id).filter((l) => 'dialogAnswer' in l);
    try {
      expect(await answer('Maybe')).toEqual({ status: 400, body: { error: { code: 'INVALID_INPUT', message: 'the dialog offers "Yes", "No"; \'Maybe\' names none of them' } } });
      // The stand-in's selection never moves (its screen ignores arrows): "No" is never confirmed.
      expect(await answer('deny')).toEqual({ status: 409, body: { error: { code: 'SESSION_REFUSED', message: expect.stringMatching(/^the selection did not reach "No" \(it shows "Yes"\): nothing was confirmed$/) } } });
      expect(answered()).toEqual([]);
      expect(await answer('approve')).toMatchObject({ status: 200, body: { chose: 'Yes' } });
      await waitFor('the dialog answered', () => answered().length === 1);
      await waitFor('the turn to end', async () => (await show(id)).reason === 'turn-end');
    } finally {
      await served.stop('SIGTERM');
    }
    await ok(dir, ['session', 'close', id], { env });
  });

  it('a dead pane tells why: its last lines in the reason, its last screen as evidence, and capture reads it', async () => {
    const { dir, env } = project();
    const bin = tempDir();
    writeFileSync(join(bin, 'claude'), '#!/bin/sh\necho "starting the agent"\necho "error: the agent broke: no config at /nowhere" >&2\nexit 3\n');
    chmodSync(join(bin, 'claude'), 0o755);
    const broken = { ...env, PATH: `${bin}:${env.PATH}` };
    const show = async (id: string) => JSON.parse(await ok(dir, ['session', 'show', id, '--json'], { env: broken }));
    const id = (await ok(dir, ['session', 'spawn', 'x', '--harness', 'claude'], { env: broken })).trim();
    await waitFor('interrupted{process-exit}', async () => (await show(id)).state === 'interrupted');
    const s = await show(id);
    expect(s).toMatchObject({ state: 'interrupted', reason: 'process-exit', source: 'process', detail: expect.stringContaining('error: the agent broke: no config at /nowhere') });
    const hash = /evidence ([0-9a-f]{64})/.exec(s.detail)![1]!;
    expect(await ok(dir, ['evidence', 'get', hash], { env: broken })).toContain('starting the agent');
    expect(await ok(dir, ['session', 'capture', id], { env: broken })).toContain('error: the agent broke');
    // A dead pane takes no keys.
    expect(await trellis(dir, ['session', 'keys', id, 'Enter'], { env: broken })).toMatchObject({ code: 1 });
    await ok(dir, ['session', 'close', id], { env: broken });
  });
});
