import { truncateSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readEndpointRecord } from '../src/store/host/online-verdict.js';
import { cleanupRepos, ok, ROOT, tempDir, tempRepo, testEnv, trellis } from './helpers/repo.js';
import { startServe, type ServeProcess } from './helpers/serve.js';

/** Issue 30, the low rows: each reproduced first, then fixed. */

const serves: ServeProcess[] = [];
afterAll(async () => {
  for (const s of serves) await s.stop();
  cleanupRepos();
});

describe('serve --host ::1 records a URL that answers', () => {
  it('the record, the printed URL and `trellis status` all say http://[::1]:port/, and it answers', async () => {
    const dir = tempRepo();
    const env = { ...testEnv(dir), TRELLIS_HOME: tempDir() };
    await ok(dir, ['init'], { env });
    const served = await startServe(ROOT, dir, env, ['--port', '0', '--host', '::1']);
    serves.push(served);
    expect(served.url).toMatch(/^http:\/\/\[::1\]:\d+\/$/);
    const verdict = await readEndpointRecord(env.TRELLIS_HOME, dir);
    expect(verdict.online && verdict.record.url).toBe(served.url);
    expect((await fetch(new URL('health', served.url))).status).toBe(200);
    const status = await trellis(dir, ['status'], { env });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(served.url);
    expect(status.stdout).not.toMatch(/offline/);
  }, 60_000);
});

describe('a damaged ref is named as damage by every verb that meets it', async () => {
  const dir = tempRepo();
  const env = { ...testEnv(dir), TRELLIS_HOME: tempDir() };
  await ok(dir, ['init'], { env });
  const id = (await ok(dir, ['issue', 'open', 'the login form loses its state'], { env })).trim();
  // What a power cut can leave: the loose ref's file is there, empty.
  truncateSync(join(dir, '.git', 'refs', 'trellis', 'issues', id), 0);

  it.each([
    ['issue reply', ['issue', 'reply', id, '--body', 'still broken']],
    ['issue show', ['issue', 'show', id]],
    ['issue close', ['issue', 'close', id]],
    ['issue reopen', ['issue', 'reopen', id]],
  ])('%s: exits non-zero naming the damaged ref and the repair, not "no issue"', async (_name, args) => {
    const r = await trellis(dir, args, { env });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`refs/trellis/issues/${id} is damaged (zero-length)`);
    expect(r.stderr).toContain('trellis doctor --repair');
    expect(r.stderr).not.toMatch(/no issue/);
  });
});
