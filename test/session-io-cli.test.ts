import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/http/app.js';
import { LiveProject } from '../src/store/board/live.js';
import { openProject } from '../src/store/compose/open-project.js';
import { cleanupRepos, tempDir, trellis } from './helpers/repo.js';
import { demoRepo } from './helpers/server.js';
import { testTmux, type TestTmux } from './helpers/tmux.js';
import { waitFor } from './helpers/wait.js';

let dir: string;
let home: string;
let tmux: TestTmux;
beforeAll(async () => {
  dir = await demoRepo();
  home = tempDir();
  // The in-process app below finds tmux where a serve would: $TRELLIS_HOME/tmux.sock.
  process.env.TRELLIS_HOME = home;
  tmux = testTmux(home, dir);
  await tmux.session('s-cli');
});
afterAll(() => {
  tmux?.kill();
  cleanupRepos();
});

/** `trellis session <action>` in a real process, on the test's own Trellis home. */
function sessionIo(action: string, args: string[], flags: string[] = []) {
  return trellis(dir, ['session', action, ...args, ...flags], { env: { TRELLIS_HOME: home } });
}

describe('trellis session capture | keys | prompt (the CLI side of session I/O)', () => {
  it('keys types into the pane and capture prints it; an unknown key and an unknown session fail clearly', async () => {
    await waitFor(async () => (await sessionIo('capture', ['s-cli'])).stdout.includes('$'), 'the shell prompt');
    const typed = await sessionIo('keys', ['s-cli'], ['--hex', Buffer.from('echo cli-$((5*5))').toString('hex')]);
    expect(typed.code).toBe(0);
    expect((await sessionIo('keys', ['s-cli', 'Enter'])).code).toBe(0);
    await waitFor(async () => (await sessionIo('capture', ['s-cli'])).stdout.includes('cli-25\n'), 'the output in the capture');
    const json = JSON.parse((await sessionIo('capture', ['s-cli'], ['--json', '--lines', '2'])).stdout) as { id: string; text: string; rows: number };
    expect(json).toMatchObject({ id: 's-cli', rows: 24 });
    expect(json.text).toMatch(/^cli-25\n\$ ?$/);

    const bad = await sessionIo('keys', ['s-cli', 'Hyper-x']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/unknown key "Hyper-x"/);
    const gone = await sessionIo('capture', ['nope']);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/no session nope/);
  });

  it('prompt appends first: a refused append is a 502 and nothing reaches the pane; a failed poke after the append is a 202', async () => {
    const project = openProject(dir);
    const app = createApp({ project, live: new LiveProject(project), instance: { instanceId: 'i', root: dir, startedAt: '' } });
    const prompt = (id: string, body: string) => app.request(`/api/sessions/${id}/prompt`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ body }) });
    const timeline = async (id: string) => (await project.sessionLog.get(id)).timeline.map((t) => t.body);

    // A closed session refuses the append: 502, nothing on its timeline, nothing typed into its pane.
    await tmux.session('s-closed');
    await waitFor(async () => (await sessionIo('capture', ['s-closed'])).stdout.includes('$'), 'the shell prompt');
    await project.sessionLog.write('s-closed', { type: 'close', wip: null, by: 'test', at: new Date().toISOString(), source: 'user' });
    const refused = await prompt('s-closed', 'echo never-$((6*7))');
    expect(refused.status).toBe(502);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('PROMPT_REFUSED');
    expect(await timeline('s-closed')).toEqual([]);
    expect(tmux.run('capture-pane', '-p', '-t', '=s-closed:')).not.toContain('never-42');

    // A pane that is gone after the append: 202, on the timeline, not delivered, and why.
    await tmux.session('s-ghost');
    tmux.run('kill-session', '-t', '=s-ghost');
    const lost = await prompt('s-ghost', 'to a pane that is gone');
    expect(lost.status).toBe(202);
    expect(await lost.json()).toMatchObject({ appended: true, delivered: false, reason: expect.stringMatching(/gone|can't find pane/) });
    expect(await timeline('s-ghost')).toEqual(['to a pane that is gone']);

    const ok = await prompt('s-cli', 'echo via-$((8*8))');
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ appended: true, delivered: true });
    await waitFor(async () => (await sessionIo('capture', ['s-cli'])).stdout.includes('via-64'), 'the prompt to run');
    expect((await prompt('s-cli', '')).status).toBe(400);
  });
});
