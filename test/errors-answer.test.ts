import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupRepos, git, ok, ROOT, tempDir, tempRepo, testEnv, trellis } from './helpers/repo.js';
import { startServe, type ServeProcess } from './helpers/serve.js';
import { json, raw, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { encodeProject } from '../src/store/trellis-home.js';

/**
 * Issue 19, row 10: an error keeps its answer. A body over the limit gets a whole 413 JSON response
 * (never a reset), directly from the backend and through the supervisor's raw proxy.
 */

/** One request over a raw socket: the whole body is sent as a client would, and whatever comes back is read. */
function rawPost(port: number, path: string, size: number, chunked: boolean, headers = ''): Promise<{ status: number | null; body: string; error?: string }> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    const got: Buffer[] = [];
    let error: string | undefined;
    socket.on('data', (d) => got.push(d));
    socket.on('error', (e: NodeJS.ErrnoException) => (error ??= e.code ?? e.message));
    socket.on('close', () => {
      const text = Buffer.concat(got).toString('latin1');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text);
      resolve({ status: status ? Number(status[1]) : null, body: text.slice(text.indexOf('\r\n\r\n') + 4), ...(error ? { error } : {}) });
    });
    socket.on('connect', async () => {
      const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n${headers}${chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${size}`}\r\n\r\n`;
      socket.write(head);
      const piece = Buffer.alloc(64 << 10, 0x20);
      for (let sent = 0; sent < size && !socket.destroyed; sent += piece.length) {
        const ok = socket.write(chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece);
        if (!ok) await new Promise((r) => socket.once('drain', r));
      }
      if (!socket.destroyed) socket.write(chunked ? '0\r\n\r\n' : '');
    });
  });
}

let served: ServeProcess;
let childPort: number;
let supervisorPort: number;
beforeAll(async () => {
  const dir = tempRepo();
  const env = { ...testEnv(dir), TRELLIS_HOME: tempDir(), TRELLIS_DRAIN_MS: '200' };
  await ok(dir, ['init'], { env });
  const config = join(dir, 'trellis.json');
  writeFileSync(config, JSON.stringify({ ...JSON.parse(readFileSync(config, 'utf8')), uploads: { maxBytes: 1 << 20 } }));
  served = await startServe(ROOT, dir, env);
  supervisorPort = Number(new URL(served.url).port);
  childPort = Number(/port (\d+)\)/.exec(served.lines.find((l) => /serving .* \(child 1/.test(l))!)![1]);
}, 60_000);
afterAll(async () => {
  await served?.stop();
  cleanupRepos();
});

describe('a body over the limit is answered with a whole 413, never a reset', () => {
  const ATTEMPTS = 20;
  const upload = 'X-Filename: big.bin\r\n';
  const cases = [
    { name: 'JSON directly to the backend, Content-Length', via: 'child', chunked: false, path: '/api/issues', headers: '' },
    { name: 'JSON directly to the backend, chunked', via: 'child', chunked: true, path: '/api/issues', headers: '' },
    { name: 'JSON through the supervisor, Content-Length', via: 'supervisor', chunked: false, path: '/api/issues', headers: '' },
    { name: 'JSON through the supervisor, chunked', via: 'supervisor', chunked: true, path: '/api/issues', headers: '' },
    { name: 'an upload through the supervisor, Content-Length', via: 'supervisor', chunked: false, path: '/api/uploads', headers: upload },
    { name: 'an upload through the supervisor, chunked', via: 'supervisor', chunked: true, path: '/api/uploads', headers: upload },
  ] as const;
  it.each(cases)(`$name: ${ATTEMPTS} of ${ATTEMPTS} get 413 PAYLOAD_TOO_LARGE`, async ({ via, chunked, path, headers }) => {
    const port = via === 'child' ? childPort : supervisorPort;
    const results = await Promise.all(Array.from({ length: ATTEMPTS }, () => rawPost(port, path, 8 << 20, chunked, headers)));
    const answered = results.filter((r) => r.status === 413 && JSON.parse(r.body).error.code === 'PAYLOAD_TOO_LARGE');
    expect(results.filter((r) => !answered.includes(r))).toEqual([]);
    expect(served.errLines.filter((l) => /ERR_STREAM_DESTROYED|Error/.test(l))).toEqual([]);
  }, 60_000);
});

describe('bad input to the gateway is a 400 that says why, and a config write is bounded', () => {
  let gw: TestGateway;
  let project: string;
  let home: string;
  beforeAll(async () => {
    home = tempDir();
    project = tempRepo();
    writeFileSync(join(project, 'trellis.json'), '{"name": "Bounded"}\n');
    gw = await startTestGateway(home);
    expect((await raw(new URL('/projects', gw.url).href, { method: 'POST', body: JSON.stringify({ path: project }) })).status).toBe(201);
  }, 60_000);
  afterAll(() => gw?.close());

  const at = (path: string) => new URL(path, gw.url).href;

  it.each([false, true])('a body over the hub limit (chunked: %s): 20 of 20 get a whole 413', async (chunked) => {
    const results = await Promise.all(Array.from({ length: 20 }, () => rawPost(gw.port, '/projects', 8 << 20, chunked)));
    expect(results.filter((r) => !(r.status === 413 && JSON.parse(r.body).error.code === 'PAYLOAD_TOO_LARGE'))).toEqual([]);
  }, 60_000);

  const nested = (depth: number, open: string, close: string, inner = '1') => `{"x":${open.repeat(depth)}${inner}${close.repeat(depth)}}`;
  const cases = [
    { name: 'PUT config nested 4,400 objects deep', method: 'PUT', path: 'config', body: nested(4_400, '{"a":', '}'), status: 400, says: 'nest at most' },
    { name: 'PUT config of 8 KB nested arrays (once a 32 MB file)', method: 'PUT', path: 'config', body: nested(4_000, '[', ']', ''), status: 400, says: 'nest at most' },
    { name: 'PUT config wide but flat: written', method: 'PUT', path: 'config', body: JSON.stringify({ name: 'Still bounded', list: Array.from({ length: 500 }, (_, i) => i) }), status: 200, says: '' },
    { name: 'GET /fs with a NUL byte', method: 'GET', path: `/fs?path=${encodeURIComponent('/tmp/\0x')}`, status: 400, says: 'NUL' },
    { name: 'GET /fs with a 5,000-character path', method: 'GET', path: `/fs?path=/${'a'.repeat(5_000)}`, status: 400, says: 'longer than' },
    { name: 'GET /fs with a 300-character name', method: 'GET', path: `/fs?path=/tmp/${'a'.repeat(300)}`, status: 400, says: 'too long' },
  ] as const;
  it.each<{ name: string; method: string; path: string; body?: string; status: number; says: string }>(cases)('$name: $status', async ({ method, path, body, status, says }) => {
    const before = readFileSync(join(project, 'trellis.json'), 'utf8');
    let r;
    if (path === 'config') {
      const url = at(`/projects/${encodeProject(project)}/config`);
      const etag = (await raw(url)).headers.etag as string;
      r = await raw(url, { method, headers: { 'If-Match': etag }, body });
    } else r = await raw(at(path), { method });
    expect(r.status, r.body).toBe(status);
    if (status === 400) {
      expect(json(r).error.code).toBe('INVALID_INPUT');
      expect(json(r).error.message).toContain(says);
      expect(readFileSync(join(project, 'trellis.json'), 'utf8')).toBe(before);
    }
    // Never more than the bound, whatever was asked.
    expect(statSync(join(project, 'trellis.json')).size).toBeLessThanOrEqual(256 << 10);
  });
});

/**
 * A real full disk: the project lives on its own small tmpfs (mounted here; this suite runs as root on
 * Linux), filled to the last byte. Writes are refused with 507 naming the disk and the repair; reads,
 * through the server and the CLI, keep answering.
 */
describe('a full disk', () => {
  let mnt: string;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let s: ServeProcess;
  let issue: string;
  beforeAll(async () => {
    mnt = tempDir();
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', mnt]);
    dir = join(mnt, 'project');
    mkdirSync(dir);
    git(dir, 'init', '-q', '-b', 'main');
    git(dir, 'config', 'user.name', 'Test Author');
    git(dir, 'config', 'user.email', 'test@example.com');
    env = { ...testEnv(dir), TRELLIS_HOME: tempDir(), TRELLIS_DRAIN_MS: '200' };
    await ok(dir, ['init'], { env });
    issue = (await ok(dir, ['issue', 'open', 'written before the disk filled'], { env })).trim();
    s = await startServe(ROOT, dir, env);
    // The projection cache goes too, so every read has something to save and finds it cannot.
    rmSync(join(dir, '.git', 'trellis', 'cache'), { recursive: true, force: true });
    fill(join(mnt, 'filler'));
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    execFileSync('umount', ['-l', mnt]);
  });

  const post = (path: string, body: unknown) => fetch(new URL(path, s.url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const writes = [
    { name: 'POST /api/issues', send: () => post('/api/issues', { concern: 'lost to a full disk' }) },
    { name: 'POST /api/issues/:id/replies', send: () => post(`/api/issues/${issue}/reply`, { body: 'lost to a full disk' }) },
  ];
  it.each(writes)('$name: 507 DISK_FULL naming the disk and the repair, never 500', async ({ send }) => {
    const r = await send();
    const body = (await r.json()) as { error: { code: string; message: string } };
    expect(r.status, JSON.stringify(body)).toBe(507);
    expect(body.error.code).toBe('DISK_FULL');
    expect(body.error.message).toContain(mnt);
    expect(body.error.message).toContain('free space');
  });

  const verbs = [
    { name: 'issue open (a write)', args: ['issue', 'open', 'lost to a full disk'], code: 1, stdout: '', stderr: 'is full (ENOSPC)' },
    { name: 'issues --json (a read)', args: ['issues', '--json'], code: 0, stdout: 'written before the disk filled', stderr: '' },
    { name: 'issue show (a read)', args: ['issue', 'show', 'ISSUE'], code: 0, stdout: 'written before the disk filled', stderr: '' },
    { name: 'doctor (a read)', args: ['doctor'], code: 0, stdout: '1 threads readable', stderr: '' },
  ];
  it.each(verbs)('trellis $name: exit $code', async ({ args, code, stdout, stderr }) => {
    const r = await trellis(dir, args.map((a) => (a === 'ISSUE' ? issue : a)), { env });
    expect(r.stderr).not.toContain('internal error');
    expect(r.code, r.stderr).toBe(code);
    expect(r.stdout).toContain(stdout);
    expect(r.stderr).toContain(stderr);
  });

  it('GET /api/issues still answers, and once space is freed the same write succeeds', async () => {
    const list = await fetch(new URL('/api/issues', s.url));
    expect(list.status).toBe(200);
    expect(JSON.stringify(await list.json())).toContain('written before the disk filled');
    rmSync(join(mnt, 'filler'));
    expect((await post('/api/issues', { concern: 'after the repair' })).status).toBe(201);
  });
});

/** Writes until the file system says ENOSPC: 1 MB pieces, then smaller, down to one byte. */
function fill(path: string): void {
  const fd = openSync(path, 'w');
  try {
    for (let piece = 1 << 20; piece >= 1; piece >>= 1) {
      const buf = Buffer.alloc(piece, 0x61);
      for (;;) {
        try {
          writeSync(fd, buf);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
          break;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
}
