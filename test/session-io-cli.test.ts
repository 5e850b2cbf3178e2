import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TrellisError } from '../src/events/index.js';
import { createApp } from '../src/http/app.js';
import { LiveProject } from '../src/store/live.js';
import { openProject } from '../src/store/project.js';
import { tmuxSocketTargets, type PaneTargets } from '../src/store/sessions/pane-target.js';
import { cleanupRepos, ROOT, run, tempDir, testEnv } from './helpers/repo.js';
import { demoRepo } from './helpers/server.js';
import { testTmux, type TestTmux } from './helpers/tmux.js';
import { waitFor } from './helpers/wait.js';

let dir: string;
let home: string;
let tmux: TestTmux;
beforeAll(async () => {
  dir = await demoRepo();
  home = tempDir();
  tmux = testTmux(home);
  tmux.session('s-cli');
});
afterAll(() => {
  tmux?.kill();
  cleanupRepos();
});

/** Runs one session I/O action the way the `session <action>` dispatcher will: the module's handler in a real process. */
function sessionIo(action: string, args: string[], options: Record<string, unknown> = {}) {
  const mod = join(ROOT, 'dist/src/cli/session-io-commands.js');
  const script = `import { runSessionIo } from ${JSON.stringify(mod)};
    runSessionIo(${JSON.stringify(action)}, { cwd: process.cwd(), args: ${JSON.stringify(args)}, options: ${JSON.stringify(options)} })
      .then((code) => { process.exitCode = code; }, (e) => { process.stderr.write('trellis: ' + e.message + '\\n'); process.exitCode = 1; });`;
  return run(process.execPath, ['--input-type=module', '-e', script], { cwd: dir, env: { ...testEnv(dir), TRELLIS_HOME: home } });
}

describe('trellis session capture | keys | prompt (the CLI side of session I/O)', () => {
  it('keys types into the pane and capture prints it; an unknown key and an unknown session fail clearly', async () => {
    await waitFor(async () => (await sessionIo('capture', ['s-cli'])).stdout.includes('$'), 'the shell prompt');
    const typed = await sessionIo('keys', ['s-cli'], { hex: Buffer.from('echo cli-$((5*5))').toString('hex') });
    expect(typed.code).toBe(0);
    expect((await sessionIo('keys', ['s-cli', 'Enter'])).code).toBe(0);
    await waitFor(async () => (await sessionIo('capture', ['s-cli'])).stdout.includes('cli-25\n'), 'the output in the capture');
    const json = JSON.parse((await sessionIo('capture', ['s-cli'], { json: true, lines: 2 })).stdout) as { id: string; text: string; rows: number };
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
    const real = tmuxSocketTargets(join(home, 'tmux.sock'));
    const appended: string[] = [];
    // The session store's side of the seam (not on this branch): a closed session refuses the append.
    const targets: PaneTargets = {
      resolve: (id) => (id === 'ghost' ? Promise.resolve({ socket: join(home, 'tmux.sock'), session: 'ghost', pane: '%999' }) : real.resolve(id)),
      appendPrompt: async (id, body) => {
        if (id === 's-closed') throw new TrellisError('APPEND_REFUSED', `session ${id} is closed`);
        appended.push(`${id}:${body}`);
      },
    };
    const app = createApp({ project, live: new LiveProject(project), instance: { instanceId: 'i', root: dir, startedAt: '' }, paneTargets: targets });
    const prompt = (id: string, body: string) => app.request(`/api/sessions/${id}/prompt`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ body }) });

    const refused = await prompt('s-closed', 'hello');
    expect(refused.status).toBe(502);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('APPEND_REFUSED');
    expect(appended).toEqual([]);

    const lost = await prompt('ghost', 'to a pane that is gone');
    expect(lost.status).toBe(202);
    expect(await lost.json()).toMatchObject({ appended: true, delivered: false, reason: expect.stringMatching(/tmux/) });
    expect(appended).toEqual(['ghost:to a pane that is gone']);

    const ok = await prompt('s-cli', 'echo via-$((8*8))');
    expect(ok.status).toBe(200);
    await waitFor(async () => (await sessionIo('capture', ['s-cli'])).stdout.includes('via-64'), 'the prompt to run');
    expect((await prompt('s-cli', '')).status).toBe(400);
  });
});
