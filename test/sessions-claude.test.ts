import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cleanupRepos, git, ok, ROOT, tempDir, tempRepo, testEnv, trellis } from './helpers/repo.js';
import { killTmux, tmuxHas, waitFor } from './helpers/sessions.js';

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) killTmux(h);
});
afterAll(() => cleanupRepos());

/** A project whose PATH finds the stand-in as `claude`. */
function project(): { dir: string; home: string; env: NodeJS.ProcessEnv } {
  const dir = tempRepo();
  const bin = tempDir();
  writeFileSync(join(bin, 'claude'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(resolve(ROOT, 'test/agents/claude-standin.mjs'))} "$@"\n`);
  chmodSync(join(bin, 'claude'), 0o755);
  const env = { ...testEnv(dir), PATH: `${bin}:${process.env.PATH}` };
  homes.push(env.TRELLIS_HOME!);
  return { dir, home: env.TRELLIS_HOME!, env };
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
    // Hooks are written into the worktree's local settings, calling `trellis session signal`.
    const settings = JSON.parse(readFileSync(join(worktree, '.claude/settings.local.json'), 'utf8'));
    expect(Object.keys(settings.hooks).sort()).toEqual(['Notification', 'SessionEnd', 'SessionStart', 'Stop', 'UserPromptSubmit']);
    expect(settings.hooks.Stop[0].hooks[0].command).toMatch(new RegExp(`session signal ${id} Stop$`));

    // The task is the launch prompt: SessionStart records the agent's id; the turn ends with Stop.
    await waitFor('the first turn to end', async () => (await show(id)).state === 'awaiting');
    const first = await show(id);
    const log = standinLog(home, id);
    expect(log[0]).toEqual({ started: ['Fix the login form'] });
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

    // Interrupt, then resume: relaunched with --resume and the recorded agent session id.
    await ok(dir, ['session', 'interrupt', id], { env });
    expect(tmuxHas(home, id)).toBe(false);
    expect(await show(id)).toMatchObject({ state: 'interrupted', reason: 'by-user', source: 'user' });
    await ok(dir, ['session', 'resume', id], { env });
    await waitFor('the stand-in to start again', () => standinLog(home, id).filter((l) => 'started' in l).length === 2);
    expect(standinLog(home, id).filter((l) => 'started' in l)[1]).toEqual({ started: ['--resume', first.agentSessionId] });
    await waitFor('its SessionStart hook to run', () => standinLog(home, id).filter((l) => l.hook === 'SessionStart').length === 2);
    expect(await show(id)).toMatchObject({ state: 'running', agentSessionId: first.agentSessionId });

    // /exit ends the agent: SessionEnd, then the pane dies; the close saves nothing needless (the hooks file is ours).
    await ok(dir, ['session', 'prompt', id, '--body', '/exit'], { env });
    await waitFor('interrupted{process-exit}', async () => (await show(id)).state === 'interrupted');
    expect(await show(id)).toMatchObject({ reason: 'process-exit' });
    const closed = JSON.parse(await ok(dir, ['session', 'close', id, '--json'], { env }));
    expect(closed).toMatchObject({ state: 'closed', wip: null });
  });

  it('an unknown hook event is refused naming the ones there are; repeated turn failures quarantine the session', async () => {
    const { dir, env } = project();
    const id = (await ok(dir, ['session', 'spawn', 'x', '--harness', 'claude'], { env })).trim();
    const r = await trellis(dir, ['session', 'signal', id, 'Explode'], { env, input: '{}' });
    expect(r).toMatchObject({ code: 1, stderr: expect.stringContaining('SessionStart, UserPromptSubmit, Stop, Notification, SessionEnd') });
    // After its first turn ends (a turn that ends well clears the failure count), three failures in a row.
    await waitFor('the first turn to end', async () => JSON.parse(await ok(dir, ['session', 'show', id, '--json'], { env })).state === 'awaiting');
    for (let i = 0; i < 3; i++) await ok(dir, ['session', 'signal', id, 'turn-failed'], { env, input: '' });
    const s = JSON.parse(await ok(dir, ['session', 'show', id, '--json'], { env }));
    expect(s).toMatchObject({ state: 'quarantined', reason: '3 turn failures in a row', source: 'supervisor' });
    await ok(dir, ['session', 'close', id], { env });
  });
});

describe('the codex adapter', () => {
  it('launches codex with its notify program, which signals the end of each turn', async () => {
    const dir = tempRepo();
    const bin = tempDir();
    mkdirSync(bin, { recursive: true });
    // A stand-in codex: like Codex CLI, it runs the configured notify program with the event JSON as its last argument.
    writeFileSync(
      join(bin, 'codex'),
      `#!/bin/sh
while [ "$1" = "-c" ]; do cfg="$2"; shift 2; done
prog=$(printf '%s' "\${cfg#notify=}" | ${JSON.stringify(process.execPath)} -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.stdout.write(JSON.parse(s).map(a=>"\\x27"+a.replace(/\\x27/g,"\\x27\\\\\\x27\\x27")+"\\x27").join(" ")))')
eval "$prog" "'{\\"type\\":\\"agent-turn-complete\\",\\"thread-id\\":\\"th-1\\",\\"turn-id\\":\\"1\\",\\"input-messages\\":[\\"$1\\"],\\"last-assistant-message\\":\\"done\\"}'"
exec sleep 600
`,
    );
    chmodSync(join(bin, 'codex'), 0o755);
    const env = { ...testEnv(dir), PATH: `${bin}:${process.env.PATH}` };
    homes.push(env.TRELLIS_HOME!);
    const id = (await ok(dir, ['session', 'spawn', 'Do it', '--harness', 'codex'], { env })).trim();
    await waitFor('the notify turn end', async () => JSON.parse(await ok(dir, ['session', 'show', id, '--json'], { env })).state === 'awaiting');
    expect(JSON.parse(await ok(dir, ['session', 'show', id, '--json'], { env }))).toMatchObject({ state: 'awaiting', reason: 'turn-end', agentSessionId: 'th-1' });
    await ok(dir, ['session', 'close', id], { env });
  });
});
