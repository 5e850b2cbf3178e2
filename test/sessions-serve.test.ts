import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, git, tempDir, tempRepo, testEnv } from './helpers/repo.js';
import { packageCopy, startServe, type ServeProcess } from './helpers/serve.js';
import { killTmux, tmux, tmuxHas, waitFor } from './helpers/sessions.js';

const running: ServeProcess[] = [];
const home = tempDir();
afterAll(async () => {
  for (const s of running) await s.stop('SIGKILL');
  killTmux(home);
  cleanupRepos();
});

async function serve(pkg: string, cwd: string): Promise<ServeProcess> {
  const s = await startServe(pkg, cwd, { ...testEnv(cwd), TRELLIS_HOME: home });
  running.push(s);
  return s;
}

const api = async (s: ServeProcess, path: string, body?: unknown) => {
  const r = await fetch(new URL(path, s.url), body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
};
const panePid = (pane: string) => tmux(home, 'display', '-p', '-t', pane, '#{pane_pid}')?.trim();

describe('sessions survive the server', () => {
  it('SIGKILLed serve: tmux sessions live on, a new serve lists them running, one killed meanwhile is interrupted{tmux-gone}; three reloads touch no tmux session', async () => {
    const dir = tempRepo();
    writeFileSync(join(dir, 'trellis.json'), '{}\n');
    git(dir, 'add', 'trellis.json');
    git(dir, 'commit', '-qm', 'trellis');
    const pkg = packageCopy();
    const first = await serve(pkg, dir);
    const a = (await api(first, '/api/sessions', { task: 'one' })).body;
    const b = (await api(first, '/api/sessions', { task: 'two' })).body;
    expect([a.state, b.state]).toEqual(['running', 'running']);
    const pidA = panePid(a.tmux.pane);
    expect(pidA).toMatch(/^\d+$/);

    first.proc.kill('SIGKILL');
    await first.exited;
    expect(tmuxHas(home, a.id)).toBe(true);
    expect(tmuxHas(home, b.id)).toBe(true);
    tmux(home, 'kill-session', '-t', `=${b.id}`);

    const second = await serve(pkg, dir);
    await waitFor('the new serve to reconcile b', async () => (await api(second, `/api/sessions/${b.id}`)).body.state === 'interrupted').catch(async (e) => {
      throw new Error(`${e.message}: ${JSON.stringify((await api(second, `/api/sessions/${b.id}`)).body)} ${second.errLines.join(' / ')}`);
    });
    expect((await api(second, `/api/sessions/${b.id}`)).body).toMatchObject({ state: 'interrupted', reason: 'tmux-gone', source: 'supervisor' });
    expect((await api(second, `/api/sessions/${a.id}`)).body).toMatchObject({ state: 'running' });
    expect((await api(second, '/api/sessions')).body.sessions.map((s: { id: string }) => s.id).sort()).toEqual([a.id, b.id].sort());

    const coreJs = join(pkg, 'dist/src/http/routes/core.js');
    const original = readFileSync(coreJs, 'utf8');
    // Three reloads: each boots a child that reconciles the sessions and drains the one before it, the same
    // path every time; the first shows a reloaded child (not the first boot) leaves session a alone, the next two that
    // a child which was itself swapped in leaves it alone too (ten, as before, cost seven more child boots).
    for (let r = 1; r <= 3; r++) {
      writeFileSync(coreJs, `${original}\n// edit ${r}\n`);
      await second.line(new RegExp(`switched to child ${r + 1} `));
    }
    expect(panePid(a.tmux.pane)).toBe(pidA);
    expect((await api(second, `/api/sessions/${a.id}`)).body).toMatchObject({ state: 'running', tmux: a.tmux });
    // The audit of a: none of the second serve’s four children wrote a transition for it.
    expect(git(dir, 'log', '--format=%s', `refs/trellis/sessions/${a.id}`).trim().split('\n')).toEqual([
      `launch: tmux ${a.id} pane ${a.tmux.pane}`,
      'start (supervisor)',
      expect.stringMatching(/^checks fixed at [0-9a-f]{12}: 0 declared scenario\(s\)$/),
      'spawn shell: one',
    ]);
    for (const id of [a.id, b.id]) expect((await api(second, `/api/sessions/${id}/close`, {})).status).toBe(200);
    expect(tmuxHas(home, a.id)).toBe(false);
  });
});
