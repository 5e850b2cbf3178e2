import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Project } from '../store/compose/open-project.js';
import { hooksDir } from '../store/sessions/verbs/hook-socket.js';
import { startHookRecorder } from './hook-recorder.js';

/*
 * A session's hook recorder's socket (issue 40): bound in a project whose git dir is deeper than a Unix
 * socket's path can name (108 bytes), reached as the hook reaches it (curl, from inside the hooks folder, by
 * the session's id), 0600 in a 0700 folder; taken over by a newer recorder; removed by its own on close only.
 */

const root = mkdtempSync(join(tmpdir(), 'trellis-recorder-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const gitdir = join(root, 'a-project-folder-whose-name-is-long'.repeat(3), '.git');
mkdirSync(gitdir, { recursive: true });
// No request here reaches the project: a wrong route is answered before anything is opened.
const p = { gitdir } as Project;

/** A request to session `id`'s socket as the hook sends it: its HTTP status and body. */
async function ask(id: string, path: string): Promise<{ code: number | null; out: string }> {
  const curl = spawn('curl', ['-s', '--unix-socket', `./${id}`, '--data-binary', '{}', '-w', '%{http_code}', `http://trellis${path}`], { cwd: hooksDir(gitdir) });
  let out = '';
  curl.stdout.on('data', (d) => (out += d));
  const code = await new Promise<number | null>((r) => curl.on('close', r));
  return { code, out };
}

describe('a session’s hook recorder', () => {
  it('listens where the hook finds it, beyond the socket path’s length, for its user only; a newer one takes its name; each removes only its own', async () => {
    expect(join(hooksDir(gitdir), 's-1').length).toBeGreaterThan(108);
    const first = (await startHookRecorder(p, 's-1', root, 'bin.js'))!;
    const socket = join(hooksDir(gitdir), 's-1');
    expect((statSync(hooksDir(gitdir)).mode & 0o777).toString(8)).toBe('700');
    expect((statSync(socket).mode & 0o777).toString(8)).toBe('600');
    expect(await ask('s-1', '/nope')).toEqual({ code: 0, out: "trellis: session s-1's recorder takes POST /signal/<id>/<event> only\n404" });

    // A resume's watcher: its recorder takes the name; the older one, closing, leaves it.
    const second = (await startHookRecorder(p, 's-1', root, 'bin.js'))!;
    const ino = statSync(socket).ino;
    await first.close();
    expect(statSync(socket).ino).toBe(ino);
    expect((await ask('s-1', '/nope')).out).toMatch(/404$/);
    await second.close();
    expect(existsSync(socket)).toBe(false);
    // Nothing listens: what makes the hook run the node hook.
    expect((await ask('s-1', '/nope')).code).toBe(7);
  });
});
