import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { recordPath } from '../src/store/host/endpoint-record.js';
import { cleanupRepos, ok, tempDir, tempRepo, testEnv, trellis } from './helpers/repo.js';
import { startServe, type ServeProcess } from './helpers/serve.js';
import { BIN, ROOT } from './helpers/repo.js';

/**
 * Issue 19, row 9: a second `trellis serve` of one project is refused while the first answers (exit 1
 * naming its pid and url), and no serve ever removes or overwrites a record it does not own.
 */
const running: ServeProcess[] = [];
afterAll(async () => {
  await Promise.all(running.map((s) => s.stop()));
  cleanupRepos();
});

async function project() {
  const dir = tempRepo();
  const home = tempDir();
  const env = { ...testEnv(dir), TRELLIS_HOME: home, TRELLIS_DRAIN_MS: '200' };
  await ok(dir, ['init'], { env });
  return { dir, home, env };
}

const serve = async (dir: string, env: NodeJS.ProcessEnv) => {
  const s = await startServe(ROOT, dir, env);
  running.push(s);
  return s;
};

/**
 * Runs a serve until it either exits (code) or comes up (code -1). One that comes up is stopped at once
 * when `stopIfUp` (a second serve that took the project over, the way a user would stop it: the first
 * then reads offline); otherwise left running, with `stop` to end it.
 */
async function secondServe(dir: string, env: NodeJS.ProcessEnv, stopIfUp = true): Promise<{ code: number | null; stderr: string; pid: number; stop: () => Promise<void> }> {
  const proc = spawn(process.execPath, [BIN, 'serve', '--port', '0'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const closed = new Promise<number | null>((resolve) => proc.on('close', (c) => resolve(c)));
  const stop = async () => {
    proc.kill('SIGINT');
    await closed;
  };
  let stdout = '';
  let stderr = '';
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const up = new Promise<boolean>((resolve) => {
    proc.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (/serving .* at http/.test(stdout)) resolve(true);
    });
    void closed.then(() => resolve(false));
  });
  if (await up) {
    if (stopIfUp) await stop();
    return { code: -1, stderr, pid: proc.pid!, stop };
  }
  return { code: await closed, stderr, pid: proc.pid!, stop };
}

const status = async (dir: string, env: NodeJS.ProcessEnv) => JSON.parse((await trellis(dir, ['status', '--json'], { env })).stdout) as { online: boolean; pid?: number; url?: string };

describe('a second trellis serve of one project', () => {
  const cases = [
    {
      name: 'while the first answers: refused, exit 1 naming its pid and url; the first stays online and its record untouched',
      async run() {
        const { dir, home, env } = await project();
        const first = await serve(dir, env);
        const record = readFileSync(recordPath(home, dir), 'utf8');
        const second = await secondServe(dir, env);
        expect(await status(dir, env)).toMatchObject({ online: true, pid: first.proc.pid, url: first.url });
        expect(readFileSync(recordPath(home, dir), 'utf8')).toBe(record);
        expect(second.code).toBe(1);
        expect(second.stderr).toContain(`pid ${first.proc.pid}`);
        expect(second.stderr).toContain(first.url);
        await first.stop();
      },
    },
    {
      name: 'two started at the same moment: exactly one serves, the other exits 1 naming it',
      async run() {
        const { dir, env } = await project();
        const [x, y] = await Promise.all([secondServe(dir, env, false), secondServe(dir, env, false)]);
        try {
          expect([x.code, y.code].sort()).toEqual([-1, 1]);
          const survivor = x.code === -1 ? x : y;
          const refused = x.code === -1 ? y : x;
          expect(refused.stderr).toContain(`pid ${survivor.pid}`);
          expect(await status(dir, env)).toMatchObject({ online: true, pid: survivor.pid });
        } finally {
          await Promise.all([x.stop(), y.stop()]);
        }
      },
    },
    {
      name: 'after the first crashed (its record names a dead pid and port): starts and replaces the stale record',
      async run() {
        const { dir, home, env } = await project();
        const first = await serve(dir, env);
        first.proc.kill('SIGKILL');
        await first.exited;
        const second = await serve(dir, env);
        expect(await status(dir, env)).toMatchObject({ online: true, pid: second.proc.pid, url: second.url });
        expect(JSON.parse(readFileSync(recordPath(home, dir), 'utf8')).pid).toBe(second.proc.pid);
        await second.stop();
      },
    },
    {
      name: 'a serve that stops never removes a record another instance wrote meanwhile',
      async run() {
        const { dir, home, env } = await project();
        const first = await serve(dir, env);
        const path = recordPath(home, dir);
        const other = { ...JSON.parse(readFileSync(path, 'utf8')), instanceId: 'another-instance', pid: 1 };
        writeFileSync(path, JSON.stringify(other));
        await first.stop();
        expect(JSON.parse(readFileSync(path, 'utf8')).instanceId).toBe('another-instance');
      },
    },
  ];
  it.each(cases)('$name', async ({ run }) => run(), 60_000);
});
