import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { signalCommand, type LaunchContext } from '../agents/adapter.js';
import { hooksDir, installHookScript } from './hook-socket.js';

/*
 * The command hook's shell program (issue 40) against a recorder that answers as told: what it prints and
 * how it exits for each answer, and when it runs the node hook it was given (here a stand-in that logs its
 * arguments and payload): only when nothing could be reached, never after a recorder answered.
 */

const root = mkdtempSync(join(tmpdir(), 'trellis-hook-sh-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const gitdir = join(root, 'git');
/** The stand-in node hook: logs its arguments (after the executable: `bin.js session signal …`) and its stdin, says something on stderr, exits 0. */
const fallback = join(root, 'node-hook');
const ran = join(root, 'node-hook.log');
writeFileSync(fallback, `#!/bin/sh\nprintf '%s|%s\\n' "$*" "$(cat)" >> '${ran}'\necho 'node hook said' >&2\n`);
chmodSync(fallback, 0o755);
const prefix = installHookScript(gitdir, `'${fallback}' 'bin.js'`);

/** Runs the installed hook for session `id`'s `event` as an agent does (`sh -c`), the payload on stdin (async: the recorders answer from this process). */
async function hook(id: string, event: string, payload: string, env: NodeJS.ProcessEnv = process.env, tail = '') {
  rmSync(ran, { force: true });
  const child = spawn('/bin/sh', ['-c', `${prefix} session signal ${id} ${event}${tail}`], { env, cwd: root });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  child.on('error', () => {});
  child.stdin.end(payload);
  const status = await new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  return { status, stdout, stderr, fallback: existsSync(ran) ? readFileSync(ran, 'utf8') : null };
}

/** A recorder on session `id`'s socket answering every request with `status` and `body`; its requests. */
async function recorder(id: string, status: number | 'hang-up', body = ''): Promise<{ server: Server; got: { url: string; body: string; pane: string | undefined }[] }> {
  const got: { url: string; body: string; pane: string | undefined }[] = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (d) => (text += d));
    req.on('end', () => {
      got.push({ url: req.url!, body: text, pane: req.headers['x-trellis-pane'] as string | undefined });
      if (status === 'hang-up') return req.socket.destroy();
      res.writeHead(status);
      res.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(join(hooksDir(gitdir), id), r));
  return { server, got };
}
const closed = (s: Server) => new Promise((r) => s.close(r));

describe('the command hook’s shell program', () => {
  it('is written into a folder only the user can reach', () => {
    expect(prefix).toBe(`sh '${join(hooksDir(gitdir), 'signal.sh')}' '${fallback}' 'bin.js'`);
    expect(spawnSync('stat', ['-c', '%a', hooksDir(gitdir)], { encoding: 'utf8' }).stdout.trim()).toBe('700');
    expect(spawnSync('sh', ['-n', join(hooksDir(gitdir), 'signal.sh')]).status).toBe(0);
  });

  it('recorded: the payload POSTed once with the hook’s pane, nothing printed, exit 0, no node hook', async () => {
    const { server, got } = await recorder('s-a', 200);
    try {
      const r = await hook('s-a', 'Stop', '{"hook_event_name":"Stop"}', { ...process.env, TMUX_PANE: '%7' });
      expect(r).toEqual({ status: 0, stdout: '', stderr: '', fallback: null });
      expect(got).toEqual([{ url: '/signal/s-a/Stop', body: '{"hook_event_name":"Stop"}', pane: '%7' }]);
    } finally {
      await closed(server);
    }
  });

  it('ignored: what the recorder said goes to stderr, exit 0; refused: exit 1 (never 2); neither runs the node hook', async () => {
    for (const [status, code] of [
      [200, 0],
      [422, 1],
      [404, 1],
    ] as const) {
      const { server, got } = await recorder('s-b', status, `trellis: said ${status}\n`);
      try {
        expect(await hook('s-b', 'Nope', '{}')).toEqual({ status: code, stdout: '', stderr: `trellis: said ${status}\n`, fallback: null });
        expect(got).toHaveLength(1);
      } finally {
        await closed(server);
      }
    }
  });

  it('a hangup before its payload is read does not end it: the signal still reaches the recorder', async () => {
    const { server, got } = await recorder('s-h', 200);
    try {
      const child = spawn('/bin/sh', ['-c', `${prefix} session signal s-h Stop`], { cwd: root, stdio: ['pipe', 'ignore', 'ignore'] });
      const exited = new Promise<number | null>((r) => child.on('close', r));
      // The agent's `sh -c` runs the hook program in a shell of its own, its child: that one ignores SIGHUP once it began.
      const ignoring = (): number | null => {
        const inner = Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(' ')[0]);
        if (!inner) return null;
        const ignored = BigInt(`0x${/SigIgn:\s*([0-9a-f]+)/.exec(readFileSync(`/proc/${inner}/status`, 'utf8'))![1]}`);
        return (ignored & 1n) === 1n ? inner : null;
      };
      let inner: number | null = null;
      for (const deadline = Date.now() + 10_000; (inner = ignoring()) === null; ) {
        if (Date.now() > deadline) throw new Error('the hook never ignored SIGHUP');
        await new Promise((r) => setTimeout(r, 10));
      }
      process.kill(inner, 'SIGHUP');
      child.stdin!.end('{"hook_event_name":"Stop"}');
      expect(await exited).toBe(0);
      expect(got.map((g) => g.body)).toEqual(['{"hook_event_name":"Stop"}']);
    } finally {
      await closed(server);
    }
  });

  it('a recorder that hangs up unanswered: said, exit 1, the node hook not run (it may have recorded)', async () => {
    const { server, got } = await recorder('s-c', 'hang-up');
    try {
      const r = await hook('s-c', 'Stop', '{}');
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/^trellis: session s-c: the session's recorder did not answer its Stop signal \(curl exit \d+\)\n$/);
      expect(r.fallback).toBeNull();
      expect(got).toHaveLength(1);
    } finally {
      await closed(server);
    }
  });

  it('nothing listens, or no curl: the node hook runs once, with the same payload, its output and status its own', async () => {
    const payload = '{"hook_event_name":"Stop","last_assistant_message":"a \'quoted\' \\\\ line\\nand more"}';
    const expected = { status: 0, stdout: '', stderr: 'node hook said\n', fallback: `bin.js session signal s-none Stop|${payload}\n` };
    expect(await hook('s-none', 'Stop', payload)).toEqual(expected);
    mkdirSync(join(root, 'bin'), { recursive: true });
    // No curl on PATH: only what the program needs besides it.
    for (const tool of ['sh', 'cat']) symlinkSync(spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim(), join(root, 'bin', tool));
    expect(await hook('s-none', 'Stop', payload, { ...process.env, PATH: join(root, 'bin') })).toEqual(expected);
  });

  it('a recorder gone, its socket file left: the node hook runs', async () => {
    const { server } = await recorder('s-d', 200);
    // The file stays (renamed back after the close unlinked it: what a recorder killed at once leaves).
    const sock = join(hooksDir(gitdir), 's-d');
    const kept = `${sock}.kept`;
    spawnSync('ln', [sock, kept]);
    await closed(server);
    spawnSync('mv', [kept, sock]);
    expect(existsSync(sock)).toBe(true);
    const r = await hook('s-d', 'Stop', '{}');
    expect(r.status).toBe(0);
    expect(r.fallback).not.toBeNull();
  });

  it('the installed command line of a program that cannot start (its file gone) exits 1, never 2 (a Stop hook’s 2 keeps Claude working)', async () => {
    const command = signalCommand({ session: { id: 's-x' }, trellis: `'${fallback}' 'bin.js'`, hook: `sh '${join(root, 'gone', 'signal.sh')}' '${fallback}' 'bin.js'` } as unknown as LaunchContext, 'Stop');
    const child = spawn('/bin/sh', ['-c', command], { cwd: root, stdio: ['pipe', 'ignore', 'pipe'] });
    child.stdin!.end('{}');
    expect(await new Promise((r) => child.on('close', r))).toBe(1);
  });

  it('any other command line (--json, more words) is the node hook’s at once', async () => {
    const r = await hook('s-a', 'Stop', '{}', process.env, ' --json');
    expect(r.status).toBe(0);
    expect(r.fallback).toBe('bin.js session signal s-a Stop --json|{}\n');
  });
});

