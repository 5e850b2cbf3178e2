import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bindError, bindPublic } from '../src/http/bind.js';
import { recordPath } from '../src/store/host/endpoint-record.js';
import { readEndpointRecord } from '../src/store/host/online-verdict.js';
import { hashPassword } from '../src/store/host/hub-config.js';
import { cleanupRepos, git, ok, tempDir, testEnv } from './helpers/repo.js';
import { loadLoop, packageCopy, startServe, writeInject, type ServeProcess, type Tally } from './helpers/serve.js';
import { demoRepo } from './helpers/server.js';

afterAll(cleanupRepos);

const running: ServeProcess[] = [];
afterAll(async () => {
  for (const s of running) await s.stop('SIGKILL');
});

/**
 * A stop drains the child, which gives idle keep-alive sockets min(1 s, TRELLIS_DRAIN_MS) to send one more
 * request: at the 10 s default every stop here took a second more than it needs. A test that is about the
 * drain sets its own.
 */
const QUICK_DRAIN = { TRELLIS_DRAIN_MS: '300' };

async function serve(pkg: string, cwd: string, extraEnv: NodeJS.ProcessEnv = {}, args?: string[]) {
  const s = await startServe(pkg, cwd, { ...testEnv(cwd), TRELLIS_HOME: join(cwd, '..', 'home'), ...QUICK_DRAIN, ...extraEnv }, args);
  running.push(s);
  return s;
}

const RELOADS = 4;
const coreJs = (pkg: string) => join(pkg, 'dist/src/http/routes/core.js');

describe('trellis serve: the supervisor', () => {
  it('keeps serving through 4 reloads in a row from real source edits: no failed request, each switch visible, a slow request finishes on the old child', async () => {
    const dir = await demoRepo();
    const pkg = packageCopy();
    const big = join(dir, '..', 'big.bin');
    writeFileSync(big, randomBytes(6 << 20));
    const hash = (await ok(dir, ['evidence', 'put', big])).trim();
    const s = await serve(pkg, dir, { TRELLIS_DRAIN_MS: '20000' });

    // A slow reader: the response stays in flight across the first reload.
    const slow = new Promise<{ child: string; bytes: number; status: number }>((resolve, reject) => {
      http.get(new URL(`/api/evidence/${hash}`, s.url), (res) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          res.pause();
          setTimeout(() => res.resume(), 15);
        });
        res.on('end', () => resolve({ child: String(res.headers['x-trellis-child']), bytes, status: res.statusCode! }));
        res.on('error', reject);
      });
    });

    const tally: Tally = { ok: 0, failed: [], children: new Set() };
    const loops = [...Array.from({ length: 6 }, () => loadLoop(s.url, true, tally)), ...Array.from({ length: 3 }, () => loadLoop(s.url, false, tally))];
    const original = readFileSync(coreJs(pkg), 'utf8');
    // Four reloads, each while the one before it may still be draining (the 20 s drain holds the slow reader's
    // child): ten took 21 s of a CPU-bound suite and showed nothing four do not.
    for (let r = 1; r <= RELOADS; r++) {
      const before = tally.ok;
      writeFileSync(coreJs(pkg), `${original}\n// edit ${r}\n`);
      await s.line(new RegExp(`switched to child ${r + 1} `));
      // let the new child take some of the load before the next edit (kept-alive connections finish on
      // the old one first: wait until the new child itself has answered)
      await new Promise<void>((resolve) => {
        const check = setInterval(() => tally.ok > before + 50 && tally.children.has(String(r + 1)) && (clearInterval(check), resolve()), 5);
      });
    }
    await Promise.all(loops.map((l) => l.stop()));

    expect(tally.failed).toEqual([]);
    expect(tally.ok).toBeGreaterThan(50 * RELOADS);
    for (let c = 1; c <= RELOADS + 1; c++) expect(tally.children).toContain(String(c));
    expect(await slow).toEqual({ child: '1', bytes: 6 << 20, status: 200 });
    expect(s.lines.filter((l) => /drained and exited/.test(l)).length).toBeGreaterThanOrEqual(1);
  });

  it('discards a broken new child — a syntax error, an exit, a /health that never answers — keeps serving, says why, and reloads once fixed', async () => {
    const dir = await demoRepo();
    const pkg = packageCopy();
    const s = await serve(pkg, dir, { TRELLIS_CHILD_BOOT_MS: '5000' });
    const original = readFileSync(coreJs(pkg), 'utf8');
    // A fresh connection each time: a kept-alive one stays with the child it was opened to.
    const servedBy = () =>
      new Promise<string>((resolve, reject) =>
        http.get(new URL('/health', s.url), { agent: false }, (res) => (res.resume(), resolve(String(res.headers['x-trellis-child'])))).on('error', reject),
      );

    writeFileSync(coreJs(pkg), `${original}\nexport const broken = ;\n`);
    expect(await s.line(/reload discarded: child 2 /)).toMatch(/child 2 exited with code 1 before listening.*still serving child 1/);
    expect(await servedBy()).toBe('1');

    writeFileSync(coreJs(pkg), `process.exit(3);\n${original}`);
    expect(await s.line(/reload discarded: child 3 /)).toMatch(/exited with code 3/);
    expect(await servedBy()).toBe('1');

    // /health's handler never answers (its row stays: a route without one is refused at boot).
    const hanging = original.replace(/'\/health', \(c\) => c\.json\([^\n]*\)\);/, "'/health', () => new Promise(() => {}));");
    expect(hanging).not.toBe(original);
    writeFileSync(coreJs(pkg), hanging);
    expect(await s.line(/reload discarded: child 4 /)).toMatch(/did not answer GET \/health within 5000 ms/);
    expect(await servedBy()).toBe('1');

    writeFileSync(coreJs(pkg), original);
    await s.line(/switched to child 5 /);
    expect(await servedBy()).toBe('5');
  });

  it('an SSE stream open across a reload is cut at the drain deadline and the EventSource reconnects to the new child', async () => {
    const dir = await demoRepo();
    const pkg = packageCopy();
    const s = await serve(pkg, dir, { TRELLIS_DRAIN_MS: '300' });
    const { EventSource } = await import('eventsource');
    const es = new EventSource(new URL('/api/graph/stream', s.url).href);
    try {
      let readies = 0;
      let next: (() => void) | undefined;
      es.addEventListener('ready', () => {
        readies++;
        next?.();
      });
      const ready = (n: number) => new Promise<void>((resolve) => (readies >= n ? resolve() : (next = () => readies >= n && resolve())));
      await ready(1);
      writeFileSync(coreJs(pkg), `${readFileSync(coreJs(pkg), 'utf8')}\n// reload\n`);
      await s.line(/switched to child 2 /);
      await ready(2);
      await s.line(/child 1 drained and exited/);
    } finally {
      es.close();
    }
  });

  it('a serving child that dies is replaced; the port holds connections meanwhile', async () => {
    const dir = await demoRepo();
    const s = await serve(packageCopy(), dir);
    const inst = await (await fetch(new URL('/api/instance', s.url))).json();
    const childPid = Number(/pid (\d+)/.exec(s.lines.find((l) => /serving/.test(l))!)![1]);
    expect(inst.pid).toBe(childPid);
    process.kill(childPid, 'SIGKILL');
    await s.line(/child 1 exited unexpectedly/);
    await s.line(/switched to child 2 /);
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => http.get(new URL('/health', s.url), { agent: false }, resolve).on('error', reject));
    res.resume();
    expect([res.statusCode, res.headers['x-trellis-child']]).toEqual([200, '2']);
  });

  it('stops on SIGINT even with an SSE stream open: the stream is cut at the drain deadline, the record removed', async () => {
    const dir = await demoRepo();
    const home = join(dir, '..', 'home');
    const s = await serve(packageCopy(), dir, { TRELLIS_DRAIN_MS: '500' });
    const streamClosed = new Promise<void>((resolve, reject) => {
      http
        .get(new URL('/api/graph/stream', s.url), (res) => {
          res.once('data', () => s.proc.kill('SIGINT'));
          res.on('close', () => resolve());
          res.on('error', () => resolve());
        })
        .on('error', reject);
    });
    await streamClosed;
    expect(await s.exited).toBe(0);
    expect(await readEndpointRecord(home, dir)).toEqual({ online: false, reason: 'no endpoint record' });
  });

  it('outside a Trellis project, serves the demo project under TRELLIS_HOME, the same copy on the next run (an issue opened in it stays); --fresh sets it aside and makes a new one', async () => {
    const home = tempDir();
    const outside = tempDir();
    const pkg = packageCopy();
    const demo = join(home, 'demo', 'leaf-and-kettle');
    const first = await startServe(pkg, outside, { ...testEnv(outside), TRELLIS_HOME: home, ...QUICK_DRAIN });
    running.push(first);
    expect(await first.line(/serving a fresh copy of the demo project at/, 'stderr')).toContain(demo);
    const board = await (await fetch(new URL('/api/graph', first.url))).json();
    expect(board.nodes).toHaveLength(20);
    const made = await (await fetch(new URL('/api/issues', first.url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ concern: 'Kept across restarts' }) })).json();
    await first.stop();

    const again = await startServe(pkg, outside, { ...testEnv(outside), TRELLIS_HOME: home, ...QUICK_DRAIN });
    running.push(again);
    expect(await again.line(/serving the demo project at/, 'stderr')).toContain(`${demo} ('trellis serve --fresh' starts a new copy)`);
    expect((await (await fetch(new URL(`/api/issues/${made.id}`, again.url))).json()).concern).toBe('Kept across restarts');
    await again.stop();

    const fresh = await startServe(pkg, outside, { ...testEnv(outside), TRELLIS_HOME: home, ...QUICK_DRAIN }, ['--port', '0', '--fresh']);
    running.push(fresh);
    const aside = /kept at (\S+)/.exec(await fresh.line(/the previous demo copy is kept at/, 'stderr'))![1]!;
    expect(existsSync(join(aside, 'trellis.json'))).toBe(true);
    expect((await fetch(new URL(`/api/issues/${made.id}`, fresh.url))).status).toBe(404);
  });

  it('gives the child its own loopback face as TRELLIS_API_URL, never the inherited one; a spec edit does not reload', async () => {
    const dir = await demoRepo();
    const s = await serve(packageCopy(), dir, { TRELLIS_API_URL: 'http://ambient.invalid:9/' });
    const inst = await (await fetch(new URL('/api/instance', s.url))).json();
    expect(inst.apiUrl).toBe(s.url);
    writeFileSync(join(dir, 'specs/cart/index.md'), '# Basket\n');
    await expect(fetch(new URL('/api/specs/cart/content', s.url)).then((r) => r.json())).resolves.toMatchObject({ body: '# Basket\n' });
    expect(s.lines.some((l) => /booting child 2/.test(l))).toBe(false);
  });

  it('an injected async throw is logged by supervisor and child, and serving continues', async () => {
    const dir = await demoRepo();
    // Thrown once the process has its guards (or after 20 s without them), not at a fixed 2 s: a supervisor
    // slow to start on a loaded machine would die of a throw that came before it could catch one.
    const whenGuarded = "const t0 = Date.now();\nconst whenGuarded = (f) => setTimeout(function check() { (process.listenerCount('uncaughtException') && process.listenerCount('unhandledRejection')) || Date.now() - t0 > 20000 ? f() : setTimeout(check, 50); }, 2000);\n";
    const inject = writeInject(tempDir(), `${whenGuarded}whenGuarded(() => { throw new Error('injected-async-throw'); });\nwhenGuarded(() => { Promise.reject(new Error('injected-rejection')); });\n`);
    const s = await serve(packageCopy(), dir, { NODE_OPTIONS: `--import=${inject}` });
    await s.line(/trellis supervisor: uncaught exception \(still serving\): Error: injected-async-throw/, 'stderr');
    await s.line(/trellis child 1: uncaught exception \(still serving\): Error: injected-async-throw/, 'stderr');
    await s.line(/trellis child 1: unhandled rejection \(still serving\): Error: injected-rejection/, 'stderr');
    expect((await fetch(new URL('/health', s.url))).status).toBe(200);
    expect(s.proc.exitCode).toBeNull();
  });
});

describe('trellis serve: the bind contract', () => {
  /** Processes whose command line runs this package copy's child entry, read from /proc. */
  const childrenOf = (pkg: string) => {
    const entry = join(pkg, 'dist/src/http/child-main.js');
    return readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(entry);
        } catch {
          return false;
        }
      })
      .join(' ');
  };

  it('a port in use, or an address that cannot be bound: a loud non-zero exit naming the port, no child left behind', async () => {
    const dir = await demoRepo();
    const pkg = packageCopy();
    // The check below can see a child: while one serves, it is found.
    const live = await serve(pkg, dir);
    expect(childrenOf(pkg)).not.toBe('');
    await live.stop();
    expect(childrenOf(pkg)).toBe('');
    const blocker = net.createServer().listen(0, '127.0.0.1');
    await new Promise((r) => blocker.once('listening', r));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const r = await runServe(pkg, dir, ['--port', String(port)]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`trellis: port ${port} is already in use on 127.0.0.1. Repair:`);
      expect(r.stderr).toContain('or choose another with --port <port>');
      expect(childrenOf(pkg)).toBe('');
      // The refusal serve said is a code of the one union: a busy port is PORT_IN_USE, another failure BIND_FAILED.
      let reaped = false;
      await expect(bindPublic(net.createServer(), port, '127.0.0.1', async () => void (reaped = true))).rejects.toMatchObject({
        code: 'PORT_IN_USE',
        message: expect.stringContaining(`port ${port} is already in use on 127.0.0.1. Repair: stop whatever holds port ${port}`),
      });
      expect(reaped).toBe(true);
      // Each failure names its own repair: an address not on this machine is not a port someone holds.
      const notHere = bindPublic(net.createServer(), 18787, '192.0.2.1');
      await expect(notHere).rejects.toMatchObject({ code: 'BIND_FAILED' });
      const notHereMsg = ((await notHere.catch((e: Error) => e)) as Error).message;
      expect(notHereMsg).toContain("Repair: 192.0.2.1 is not one of this machine's addresses: use --host with one of them, or 127.0.0.1.");
      expect(notHereMsg).not.toMatch(/stop whatever holds|lsof/);
      // Ports under 1024 need privileges (this test may run as root, where the bind itself would succeed).
      expect(bindError(80, '0.0.0.0', 'EACCES')).toMatchObject({
        code: 'BIND_FAILED',
        message: 'port 80 on 0.0.0.0 is not permitted for this user. Repair: ports under 1024 need privileges: use a port above 1023 with --port <port>.',
      });
      // A non-loopback address is a public face: refused without an admin password, before anything binds;
      // with one, its bind failure is as loud.
      const refused = await runServe(pkg, dir, ['--port', '18787', '--host', '192.0.2.1']);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("serve --host 192.0.2.1 refuses to start without an admin password");
      const home = join(dir, '..', 'home');
      mkdirSync(home, { recursive: true });
      writeFileSync(join(home, 'hub.json'), JSON.stringify({ adminPassword: await hashPassword('a password for the bind test') }));
      const r2 = await runServe(pkg, dir, ['--port', '18787', '--host', '192.0.2.1']);
      expect(r2.code).toBe(1);
      expect(r2.stderr).toMatch(/address 192\.0\.2\.1 is not on this machine, so port 18787 cannot be bound/);
      expect(childrenOf(pkg)).toBe('');
    } finally {
      blocker.close();
    }
  });

  async function runServe(pkg: string, cwd: string, args: string[]) {
    const { run } = await import('./helpers/repo.js');
    return run(process.execPath, [join(pkg, 'dist/src/cli/bin.js'), 'serve', ...args], { cwd, env: { ...testEnv(cwd), TRELLIS_HOME: join(cwd, '..', 'home') } });
  }
});

describe('endpoint records', () => {
  it('are trusted only after the live identity probe: a killed serve, a recycled port, the wrong slot, a non-loopback url are all offline', async () => {
    const dir = await demoRepo();
    const home = join(dir, '..', 'home');
    const s = await serve(packageCopy(), dir);
    const online = await readEndpointRecord(home, dir);
    expect(online).toMatchObject({ online: true, record: { url: s.url, root: dir, pid: s.proc.pid, version: 1, identity: { toplevel: dir, worktree: false } } });
    expect(await ok(dir, ['status'], { env: { TRELLIS_HOME: home } })).toMatch(new RegExp(`^online: ${dir} is served at ${s.url}`));
    expect(await ok(dir, [], { env: { TRELLIS_HOME: home } })).toMatch(/^online:/);

    await s.stop('SIGKILL');
    const stale = await readEndpointRecord(home, dir);
    expect(stale).toMatchObject({ online: false, reason: expect.stringMatching(/does not answer/) });

    // Something else now answers on the recycled port.
    const port = Number(new URL(s.url).port);
    const impostor = http.createServer((_req, res) => res.end(JSON.stringify({ instanceId: 'someone-else', root: dir }))).listen(port, '127.0.0.1');
    await new Promise((r) => impostor.once('listening', r));
    try {
      expect(await readEndpointRecord(home, dir)).toMatchObject({ online: false, reason: expect.stringContaining('another instance') });
    } finally {
      impostor.close();
    }

    const record = JSON.parse(readFileSync(recordPath(home, dir), 'utf8'));
    const other = await demoRepo();
    execFileSync('mkdir', ['-p', join(recordPath(home, other), '..')]);
    writeFileSync(recordPath(home, other), JSON.stringify(record));
    expect(await readEndpointRecord(home, other)).toMatchObject({ online: false, reason: expect.stringContaining('not this project') });

    writeFileSync(recordPath(home, dir), JSON.stringify({ ...record, url: 'http://192.0.2.1:8787/' }));
    expect(await readEndpointRecord(home, dir)).toMatchObject({ online: false, reason: expect.stringContaining('not loopback') });
    const status = await (await import('./helpers/repo.js')).trellis(dir, ['status'], { env: { TRELLIS_HOME: home } });
    expect(status.code).toBe(1);
    expect(status.stdout).toMatch(/^offline: .*start one with 'trellis serve'/);
  });

  it('a clean stop removes only a record that still carries its own instanceId', async () => {
    const dir = await demoRepo();
    const home = join(dir, '..', 'home');
    const pkg = packageCopy();
    const a = await serve(pkg, dir);
    expect(await a.stop('SIGINT')).toBe(0);
    expect(await readEndpointRecord(home, dir)).toEqual({ online: false, reason: 'no endpoint record' });

    const b = await serve(pkg, dir);
    const path = recordPath(home, dir);
    const taken = { ...JSON.parse(readFileSync(path, 'utf8')), instanceId: 'a-newer-serve' };
    writeFileSync(path, JSON.stringify(taken));
    expect(await b.stop('SIGINT')).toBe(0);
    expect(JSON.parse(readFileSync(path, 'utf8')).instanceId).toBe('a-newer-serve');
  });

  it('the record’s child is followed only when it answers as the same instance: an impostor’s port, a non-loopback one and garbage are dropped, the face still online', async () => {
    const dir = await demoRepo();
    const home = join(dir, '..', 'home');
    const s = await serve(packageCopy(), dir);
    const path = recordPath(home, dir);
    const record = JSON.parse(readFileSync(path, 'utf8'));
    expect(record.child).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(await readEndpointRecord(home, dir)).toMatchObject({ online: true, record: { url: s.url, child: record.child } });

    const impostor = http.createServer((_req, res) => res.end(JSON.stringify({ instanceId: 'someone-else', root: dir }))).listen(0, '127.0.0.1');
    await new Promise((r) => impostor.once('listening', r));
    try {
      for (const child of [`http://127.0.0.1:${(impostor.address() as net.AddressInfo).port}/`, 'http://192.0.2.1:8787/', 'not a url']) {
        writeFileSync(path, JSON.stringify({ ...record, child }));
        const verdict = await readEndpointRecord(home, dir);
        expect(verdict).toMatchObject({ online: true, record: { url: s.url } });
        expect(verdict.online && 'child' in verdict.record).toBe(false);
      }
    } finally {
      impostor.close();
    }
    writeFileSync(path, JSON.stringify({ ...record, child: 42 }));
    expect(await readEndpointRecord(home, dir)).toMatchObject({ online: false, reason: expect.stringContaining('not an endpoint record') });
  });

  it('a linked worktree’s serve registers under its own toplevel and leaves the main checkout’s slot alone', async () => {
    const dir = await demoRepo();
    const home = join(dir, '..', 'home');
    const wt = join(dir, '..', 'wt');
    git(dir, 'worktree', 'add', '-q', '-b', 'side', wt);
    const pkg = packageCopy();
    const main = await serve(pkg, dir);
    const side = await serve(pkg, wt);
    expect(recordPath(home, wt)).not.toBe(recordPath(home, dir));
    expect(await readEndpointRecord(home, dir)).toMatchObject({ online: true, record: { url: main.url, identity: { worktree: false } } });
    expect(await readEndpointRecord(home, wt)).toMatchObject({ online: true, record: { url: side.url, root: wt, identity: { toplevel: wt, worktree: true } } });
  });
});
