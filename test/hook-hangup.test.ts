import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, cleanupRepos, git, ok } from './helpers/repo.js';
import { killTmux, standinClaudeProject, waitFor } from './helpers/sessions.js';

/*
 * A command hook whose pane is killed as it runs (a close or an interrupt kills the agent's tmux session,
 * and the terminal's hangup reaches the hook): it must still record its signal and leave the session's ref
 * unlocked. Seen in a clean-clone run: a hook ended by the hangup mid-append left the ref's lock, and the
 * `session close` that killed the pane waited for it and was refused ("…lock exists (5s old)").
 */

let home: string | undefined;
afterAll(() => {
  if (home) killTmux(home);
  cleanupRepos();
});

/** Whether process `pid` catches SIGHUP (its SigCgt mask in /proc: signal 1 is bit 0). */
const catchesHangup = (pid: number) => (BigInt(`0x${/SigCgt:\s*([0-9a-f]+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]}`) & 1n) === 1n;

describe('the command hook and its pane’s hangup', () => {
  it('a hangup while the hook runs does not end it: its signal is recorded and the ref is left unlocked', async () => {
    const { dir, env } = standinClaudeProject();
    home = env.TRELLIS_HOME!;
    const id = (await ok(dir, ['session', 'spawn', 'x', '--harness', 'claude'], { env })).trim();
    const subjects = () => git(dir, 'log', '--format=%s', `refs/trellis/sessions/${id}`).trim().split('\n');
    await waitFor('the first turn to end', () => subjects().includes('await turn-end (hook)'));
    const runs = () => subjects().filter((s) => s === 'run (hook)').length;
    const before = runs();

    // The hook reads its payload to the end of stdin: held open, the hangup comes before its write.
    const hook = spawn(process.execPath, [BIN, 'session', 'signal', id, 'UserPromptSubmit'], { cwd: dir, env, stdio: ['pipe', 'ignore', 'pipe'] });
    const exited = new Promise<number | null>((r) => hook.on('exit', (code, signal) => r(signal ? -1 : code)));
    await waitFor('the hook to catch the hangup', () => catchesHangup(hook.pid!));
    hook.kill('SIGHUP');
    hook.stdin.end(JSON.stringify({ hook_event_name: 'UserPromptSubmit', session_id: 'x', prompt: 'go on' }));
    expect(await exited).toBe(0);
    expect(runs()).toBe(before + 1);
    // Nothing left locked: the next writer (a close) goes through at once.
    expect(JSON.parse(await ok(dir, ['session', 'close', id, '--json'], { env }))).toMatchObject({ state: 'closed' });
  });
});
