import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanupRepos, git, ok, tempDir, trellis } from './helpers/repo.js';
import { killTmux, runInstalledHook, standinClaudeProject, waitFor } from './helpers/sessions.js';

/*
 * The command hook as the launch installs it (issue 40), with the session's recorder (its screen watcher)
 * beside it, a stand-in claude idle after its first turn (and a queued session): its signal goes to the recorder,
 * no Node process started; with none reachable, the node hook records it once; what the recorder ignores,
 * the hook says as the node hook does; a request naming another session records into the recorder's own.
 *
 * Then a command hook whose pane is killed as it runs (a close or an interrupt kills the agent's tmux session,
 * and the terminal's hangup reaches the hook): it must still record its signal and leave the session's ref
 * unlocked. Seen in a clean-clone run: a hook ended by the hangup mid-append left the ref's lock, and the
 * `session close` that killed the pane waited for it and was refused ("…lock exists (5s old)").
 */

const project = standinClaudeProject();
const { dir, env } = project;
afterAll(() => {
  killTmux(project.home);
  cleanupRepos();
});
let a = '';
let b = '';
beforeAll(async () => {
  a = (await ok(dir, ['session', 'spawn', 'x', '--harness', 'claude'], { env })).trim();
  await waitFor('the first turn to end', () => subjects(a).includes('await turn-end (hook)'));
  // Another session of the project, left in the queue (no free memory is ever enough): its log is all it needs.
  writeFileSync(join(dir, 'trellis.local.json'), JSON.stringify({ sessions: { confine: 'off', minFreeMb: 1e12 } }));
  b = (await ok(dir, ['session', 'spawn', 'y', '--harness', 'claude'], { env })).trim();
});

const subjects = (id: string) => git(dir, 'log', '--format=%s', `refs/trellis/sessions/${id}`).trim().split('\n');
const runs = (id: string) => subjects(id).filter((s) => s === 'run (hook)').length;
const prompt = JSON.stringify({ hook_event_name: 'UserPromptSubmit', session_id: 'x', prompt: 'go on' });
const stop = JSON.stringify({ hook_event_name: 'Stop', session_id: 'x', stop_hook_active: false, last_assistant_message: 'done' });

/** Session `id`'s installed command hook for `event`, run as Claude Code runs one, its Node processes counted (helpers/sessions.ts). */
async function installedHook(id: string, event: string, payload: string, extra: NodeJS.ProcessEnv = {}, as = event) {
  const { worktree } = JSON.parse(await ok(dir, ['session', 'show', id, '--json'], { env })) as { worktree: string };
  return runInstalledHook(worktree, event, payload, { ...env, ...extra }, { as });
}

/** The node hook itself, run directly (what the installed hook ran before issue 40). */
async function nodeHook(id: string, event: string, payload: string) {
  const { code: status, stdout, stderr } = await trellis(dir, ['session', 'signal', id, event], { input: payload, env });
  return { status, stdout, stderr };
}

describe('the command hook as installed, its session’s recorder beside it', () => {
  it('records through the recorder’s socket, starting no Node process; the signal’s source is the hook', async () => {
    const before = runs(a);
    const r = await installedHook(a, 'UserPromptSubmit', prompt);
    expect(r.command).toMatch(/^sh '[^']*\/\.git\/trellis\/hooks\/signal\.sh' '[^']*' '[^']*bin\.js' session signal \S+ UserPromptSubmit \|\| exit 1$/);
    expect(r).toMatchObject({ status: 0, stdout: '', stderr: '', nodes: 0 });
    expect(runs(a)).toBe(before + 1);
    expect(subjects(a)[0]).toBe('run (hook)');
  });

  it('nothing reachable (no socket, or no curl): the node hook records it, once', async () => {
    const socket = join(dir, '.git', 'trellis', 'hooks', a);
    expect(existsSync(socket)).toBe(true);
    renameSync(socket, `${socket}.away`);
    try {
      const r = await installedHook(a, 'Stop', stop);
      expect(r).toMatchObject({ status: 0, stdout: '', stderr: '', nodes: 1 });
      expect(subjects(a).filter((s) => s === 'await turn-end (hook)')).toHaveLength(2);
    } finally {
      renameSync(`${socket}.away`, socket);
    }
    // No curl on PATH (the tools the hook and its node hook use besides it are there).
    const bin = tempDir();
    mkdirSync(bin, { recursive: true });
    for (const tool of ['sh', 'cat', 'git', 'tmux']) symlinkSync((env.PATH ?? '').split(':').map((d) => join(d, tool)).find((p) => existsSync(p))!, join(bin, tool));
    const before = runs(a);
    const r = await installedHook(a, 'UserPromptSubmit', prompt, { PATH: bin });
    expect(r).toMatchObject({ status: 0, stdout: '', stderr: '', nodes: 1 });
    expect(runs(a)).toBe(before + 1);
  });

  it('what the recorder ignores (an unknown event, a payload that is not JSON) it says as the node hook does: exit 0, nothing recorded twice', async () => {
    for (const [event, payload] of [
      ['NoSuchEvent', prompt],
      ['UserPromptSubmit', 'not json'],
    ] as const) {
      const log = subjects(a).length;
      const sh = await installedHook(a, 'UserPromptSubmit', payload, {}, event);
      expect(sh.nodes).toBe(0);
      const node = await nodeHook(a, event, payload);
      expect(sh).toMatchObject({ status: node.status, stdout: node.stdout, stderr: node.stderr });
      expect(sh.stderr).toMatch(new RegExp(`^trellis: session ${a}: ignored ${event} signal: `));
      expect(subjects(a).length).toBe(log);
    }
  });

  it('a request naming another session is recorded into the recorder’s own, never the other’s', async () => {
    // Idle at its input: a prompt's signal is a transition.
    expect((await nodeHook(a, 'Stop', stop)).status).toBe(0);
    const [beforeA, logB] = [runs(a), subjects(b)];
    const curl = spawn('curl', ['-s', '--unix-socket', join(dir, '.git', 'trellis', 'hooks', a), '--data-binary', prompt, '-w', '%{http_code}', `http://trellis/signal/${b}/UserPromptSubmit`]);
    let out = '';
    curl.stdout.on('data', (d) => (out += d));
    expect(await new Promise((r) => curl.on('close', r))).toBe(0);
    expect(out).toBe('200');
    expect(runs(a)).toBe(beforeA + 1);
    expect(subjects(b)).toEqual(logB);
  });
});

/** Whether process `pid` catches SIGHUP (its SigCgt mask in /proc: signal 1 is bit 0). */
const catchesHangup = (pid: number) => (BigInt(`0x${/SigCgt:\s*([0-9a-f]+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]}`) & 1n) === 1n;

describe('the command hook and its pane’s hangup', () => {
  it('a hangup while the hook runs does not end it: its signal is recorded and the ref is left unlocked', async () => {
    const id = a;
    // Idle at its input first: the prompt's signal is a transition.
    expect((await nodeHook(id, 'Stop', stop)).status).toBe(0);
    const before = runs(id);

    // The hook reads its payload to the end of stdin: held open, the hangup comes before its write.
    const hook = spawn(process.execPath, [BIN, 'session', 'signal', id, 'UserPromptSubmit'], { cwd: dir, env, stdio: ['pipe', 'ignore', 'pipe'] });
    const exited = new Promise<number | null>((r) => hook.on('exit', (code, signal) => r(signal ? -1 : code)));
    await waitFor('the hook to catch the hangup', () => catchesHangup(hook.pid!));
    hook.kill('SIGHUP');
    hook.stdin.end(JSON.stringify({ hook_event_name: 'UserPromptSubmit', session_id: 'x', prompt: 'go on' }));
    expect(await exited).toBe(0);
    expect(runs(id)).toBe(before + 1);
    // Nothing left locked: the next writer (a close) goes through at once.
    expect(JSON.parse(await ok(dir, ['session', 'close', id, '--json'], { env }))).toMatchObject({ state: 'closed' });
  });
});
