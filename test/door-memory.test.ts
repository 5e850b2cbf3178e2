import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeProject } from '../src/store/trellis-home.js';
import { readEndpointRecord } from '../src/store/host/online-verdict.js';
import { hashPassword } from '../src/store/host/hub-config.js';
import { BIN, cleanupRepos, ok, ROOT, tempDir, tempRepo, testEnv } from './helpers/repo.js';
import { startServe, type ServeProcess } from './helpers/serve.js';

/**
 * Issue 30, row 1: a body over its limit is refused and its bytes are not kept. Each of 3 rounds sends
 * 8 bodies of 100 MB (streamed from one 64 KB block, never held whole here) to every door — the
 * gateway before login (the login route, an admin route, a project's proxy), after login (an admin
 * route, the proxy to the backend) and the backend's child directly (a JSON route, an upload) — half with
 * Content-Length, half chunked. The real processes' resident memory is read from /proc after each
 * round. A process may settle at a higher plateau once (V8 grows its young generation and malloc keeps
 * its arenas after the first burst of 8 parallel 1 MB buffers: CI saw the child level at +67 MB from
 * round 2 to 5), so the test asks two things a leak cannot pass: no round ends more than 160 MB above
 * the baseline, and the last round ends within 64 MB of the first. Before the fix each refused body
 * left ≈ 64 MB behind (the gateway went 89 → 622 → 1,132 → 1,652 MB over 3 rounds of the login route
 * alone): over 500 MB after the first round, and as much again each round after.
 * Three rounds, not five (the rounds are nearly all of this file's 39 s of CPU): round 1 alone fails that
 * bug by the ceiling, and rounds 2-3 against round 1 still fail any leak of more than about 0.8 MB a body
 * at the gateway (40 bodies a round reach it) or 2 MB at the child (at least 16 a round), 1/80 and 1/32 of it.
 */

const PASSWORD = 'correct horse battery staple';
const BODY = 100 << 20;
const ROUNDS = 3;
const PER_DOOR = 8;
const CEILING_MB = 160;
const GROWTH_MB = 64;

let served: ServeProcess;
let gateway: ChildProcess;
let gatewayUrl: string;
let childUrl: string;
let childPid: number;
let id: string;
let cookie: string;

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** One POST of `size` bytes from a reused block (backpressure respected); resolves with the status, or the error when the server closed first. */
function hostileBody(url: string, chunked: boolean, headers: Record<string, string> = {}, size = BODY): Promise<number | string> {
  return new Promise((resolve) => {
    const req = http.request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', ...(chunked ? {} : { 'content-length': String(size) }), ...headers } });
    const block = Buffer.alloc(64 << 10, 0x20);
    let sent = 0;
    let done = false;
    const finish = (v: number | string) => {
      if (done) return;
      done = true;
      req.destroy();
      resolve(v);
    };
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => finish(res.statusCode ?? 0));
    });
    req.on('error', (e: NodeJS.ErrnoException) => finish(e.code ?? e.message));
    const pump = () => {
      while (sent < size && !done) {
        sent += block.length;
        if (!req.write(block)) return void req.once('drain', pump);
      }
      if (!done) req.end();
    };
    pump();
  });
}

beforeAll(async () => {
  const dir = tempRepo();
  // TRELLIS_DRAIN_MS: the serve's stop at the end gives idle keep-alive sockets min(1 s, it) (the bodies'
  // own drain bound is the body limit's, not this).
  const env = { ...testEnv(dir), TRELLIS_HOME: tempDir(), TRELLIS_DRAIN_MS: '300' };
  await ok(dir, ['init'], { env });
  const config = join(dir, 'trellis.json');
  writeFileSync(config, JSON.stringify({ ...JSON.parse(readFileSync(config, 'utf8')), uploads: { maxBytes: 1 << 20 } }));
  const home = env.TRELLIS_HOME!;
  writeFileSync(join(home, 'hub.json'), JSON.stringify({ adminPassword: await hashPassword(PASSWORD) }));
  writeFileSync(join(home, 'projects.json'), JSON.stringify({ version: 1, projects: [{ root: dir, addedAt: new Date().toISOString() }] }));
  served = await startServe(ROOT, dir, env);
  id = encodeProject(dir);
  const verdict = await readEndpointRecord(home, dir);
  if (!verdict.online || !verdict.record.child) throw new Error(`no child in the endpoint record: ${JSON.stringify(verdict)}`);
  childUrl = verdict.record.child;
  childPid = Number(/pid (\d+)/.exec(served.lines.find((l) => /serving .* \(child 1/.test(l))!)?.[1] ?? NaN);
  gateway = spawn(process.execPath, [BIN, 'dashboard', '--port', '0'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'inherit'] });
  gatewayUrl = await new Promise<string>((resolve, reject) => {
    let out = '';
    gateway.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /(http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    gateway.on('exit', (code) => reject(new Error(`the gateway exited ${code}: ${out}`)));
  });
  const login = await fetch(`${gatewayUrl}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: PASSWORD }) });
  expect(login.status).toBe(200);
  cookie = login.headers.getSetCookie()[0]!.split(';')[0]!;
}, 60_000);

afterAll(async () => {
  gateway?.kill('SIGTERM');
  await served?.stop();
  cleanupRepos();
});

describe('bodies over their limit leave no memory behind', () => {
  it(`${ROUNDS} rounds of ${PER_DOOR} × 100 MB to every door: gateway and child level off within ${CEILING_MB} MB of their baseline and grow under ${GROWTH_MB} MB after round 1`, async () => {
    expect(childPid).toBeGreaterThan(0);
    const doors: { name: string; url: string; headers: Record<string, string> }[] = [
      { name: 'gateway login, no login', url: `${gatewayUrl}/auth/login`, headers: {} },
      { name: 'gateway admin route, no login', url: `${gatewayUrl}/projects`, headers: {} },
      { name: 'gateway proxy, no login', url: `${gatewayUrl}/p/${id}/api/issues`, headers: {} },
      { name: 'gateway admin route, logged in', url: `${gatewayUrl}/projects`, headers: { cookie } },
      { name: 'gateway proxy to the child, logged in', url: `${gatewayUrl}/p/${id}/api/issues`, headers: { cookie } },
      { name: 'child JSON route', url: `${childUrl}api/issues`, headers: {} },
      { name: 'child upload', url: `${childUrl}api/uploads`, headers: { 'x-filename': 'big.bin' } },
    ];
    // Warm-up: every door once with a small over-limit body (lazy imports, pools, JIT), then the baseline.
    for (const d of doors) await hostileBody(d.url, false, d.headers, 2 << 20);
    const base = { gateway: rssMb(gateway.pid!), child: rssMb(childPid) };
    const seen: { round: number; gateway: number; child: number; statuses: string }[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const statuses = new Set<string>();
      for (const d of doors) {
        const got = await Promise.all(Array.from({ length: PER_DOOR }, (_, i) => hostileBody(d.url, i % 2 === 1, d.headers)));
        for (const s of got) statuses.add(`${d.name}: ${s}`);
      }
      seen.push({ round, gateway: Math.round(rssMb(gateway.pid!) - base.gateway), child: Math.round(rssMb(childPid) - base.child), statuses: [...statuses].join(', ') });
    }
    // Every door refused (a 401 or 413; a reset only once the drain bound was passed), and nothing piled up.
    for (const r of seen) expect(r.statuses).not.toMatch(/: (2\d\d|5\d\d)/);
    expect(seen.filter((r) => r.gateway > CEILING_MB || r.child > CEILING_MB)).toEqual([]);
    const [first, last] = [seen[0]!, seen[seen.length - 1]!];
    expect({ gateway: last.gateway - first.gateway <= GROWTH_MB, child: last.child - first.child <= GROWTH_MB, seen }).toMatchObject({ gateway: true, child: true });
  }, 240_000);
});
