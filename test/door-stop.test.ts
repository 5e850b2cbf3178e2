import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupRepos, ok, tempDir, tempRepo, testEnv } from './helpers/repo.js';
import { packageCopy } from './helpers/serve.js';
import { waitFor } from './helpers/sessions.js';

/**
 * Issue 30, row 5: a clean stop at any moment. `trellis serve` is stopped with SIGTERM while it stands
 * at each named point of its start, a hot reload and a dead child's replacement — held there by its
 * test pause (TRELLIS_TEST_PAUSE, src/supervisor/test-pauses.ts), not aimed by timing — and must drain
 * and exit 0 with its "stopped" line, leaving no child behind. Before the fix, a SIGTERM during the
 * record rewrite that starts a replacement ("replacing a dead child; booting child 2") killed serve by
 * the signal: write-file-atomic's signal-exit handler re-sent it once serve's `once` listener was gone.
 */

let pkg: string;
let dir: string;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  pkg = packageCopy();
  dir = tempRepo();
  env = { ...testEnv(dir), TRELLIS_HOME: tempDir(), TRELLIS_DRAIN_MS: '500' };
  await ok(dir, ['init'], { env });
}, 60_000);
afterAll(() => cleanupRepos());

type Trigger = 'none' | 'reload' | 'kill-child';

const CASES: { pause: string; trigger: Trigger }[] = [
  { pause: 'first-boot', trigger: 'none' },
  { pause: 'record-write#1', trigger: 'none' },
  { pause: 'reload-booted', trigger: 'reload' },
  { pause: 'record-write#2', trigger: 'reload' },
  { pause: 'switched', trigger: 'reload' },
  { pause: 'replace', trigger: 'kill-child' },
  { pause: 'record-write#2', trigger: 'kill-child' },
  { pause: 'reload-booted', trigger: 'kill-child' },
  { pause: 'record-write#3', trigger: 'kill-child' },
];

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('SIGTERM at any point of start, reload and replacement: drained, exit 0', () => {
  it.each(CASES)('$trigger, paused at $pause', async ({ pause, trigger }) => {
    const proc = spawn(process.execPath, [join(pkg, 'dist/src/cli/bin.js'), 'serve', '--port', '0'], { cwd: dir, env: { ...env, TRELLIS_TEST_PAUSE: pause }, stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: string[] = [];
    const read = (d: Buffer) => lines.push(...d.toString().split('\n').filter(Boolean));
    proc.stdout!.on('data', read);
    proc.stderr!.on('data', read);
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
    try {
      const seen = (re: RegExp) => waitFor(`a line matching ${re} (log: ${lines.join(' | ')})`, () => lines.find((l) => re.test(l)), 30_000);
      if (trigger !== 'none') {
        const serving = await seen(/serving .* \(child 1, pid (\d+)/);
        if (trigger === 'reload') writeFileSync(join(pkg, 'dist/src/reload-marker.js'), `export const at = ${Date.now()};\n`);
        else process.kill(Number(/pid (\d+)/.exec(serving)![1]), 'SIGKILL');
      }
      await seen(new RegExp(`test pause at ${pause.includes('#') ? pause : `${pause}#1`}$`));
      proc.kill('SIGTERM');
      const end = await exited;
      expect({ ...end, stopped: lines.includes('trellis: stopped') }, lines.join('\n')).toEqual({ code: 0, signal: null, stopped: true });
      // Every child it started has exited (drained, or killed at its deadline): none is left serving.
      const pids = lines.flatMap((l) => [.../pid (\d+)/g.exec(l) ?? []].slice(1)).map(Number);
      await waitFor('every child to exit', () => pids.every((p) => !alive(p)), 10_000);
    } finally {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    }
  }, 60_000);
});
