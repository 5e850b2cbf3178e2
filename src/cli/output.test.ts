/**
 * The CLI's output (cli/output.ts) written straight to descriptors 1 and 2 (issue 40: making
 * process.stdout/stderr on a pipe loaded `net` and two sockets at every start): every byte still reaches a
 * reader that is slow to read, through a descriptor opened non-blocking too (EAGAIN: the rest goes through
 * the stream, which waits), a reader that leaves early is no error, and the exit code is the verb's.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const OUTPUT = pathToFileURL(resolve(import.meta.dirname, '../../dist/src/cli/output.js')).href;
const dir = mkdtempSync(join(tmpdir(), 'trellis-output-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A verb's output: 2 MB on stdout in 20 writes, a line on stderr, exit code 3; `nonblock` makes fd 1 non-blocking first. */
const child = join(dir, 'child.mjs');
writeFileSync(
  child,
  `const { out, err, exitAfterFlush, setMachineOutput } = await import(${JSON.stringify(OUTPUT)});
setMachineOutput(true);
if (process.argv[2] === 'nonblock') process.stdout._handle.setBlocking(false);
const line = 'x'.repeat(99) + '\\n';
for (let i = 0; i < 20; i++) await out(line.repeat(1000));
await err('done\\n');
if (process.argv[2] === 'streams') await err(process.moduleLoadList.includes('NativeModule net') ? 'net loaded\\n' : 'no net\\n');
await exitAfterFlush(3);
`,
);

/** Runs the child with its stdout read only after `lateMs`; resolves with what arrived. */
function run(mode: string, lateMs: number): Promise<{ bytes: number; code: number | null; stderr: string }> {
  return new Promise((done) => {
    const c = spawn(process.execPath, [child, mode]);
    let bytes = 0;
    let stderr = '';
    c.stdout.pause();
    setTimeout(() => {
      c.stdout.on('data', (d: Buffer) => (bytes += d.length));
      c.stdout.resume();
    }, lateMs);
    c.stderr.on('data', (d: Buffer) => (stderr += d));
    c.on('close', (code) => done({ bytes, code, stderr }));
  });
}

describe('CLI output straight to the descriptors', () => {
  it('every byte reaches a slow reader, blocking or non-blocking descriptor; the exit code is kept; no stream made', async () => {
    const [blocking, nonblocking, streams] = await Promise.all([run('block', 200), run('nonblock', 200), run('streams', 0)]);
    expect(blocking).toEqual({ bytes: 2_000_000, code: 3, stderr: 'done\n' });
    expect(nonblocking).toEqual({ bytes: 2_000_000, code: 3, stderr: 'done\n' });
    // Writing made neither standard stream: `net` (what a pipe's stream loads) never loaded.
    expect(streams).toEqual({ bytes: 2_000_000, code: 3, stderr: 'done\nno net\n' });
  });

  it('a reader that leaves early is no error', () => {
    const r = spawnSync('sh', ['-c', `"${process.execPath}" "${child}" block | head -c 10`], { encoding: 'utf8' });
    expect(r.stdout).toBe('x'.repeat(10));
    expect(r.stderr).toBe('done\n');
  });
});
