/**
 * The gateway sends a project's requests to the serving child directly (the record's `child`), not
 * through the serve's raw proxy: across hot swaps, with the supervisor frozen, and while a dead child is
 * being replaced, no request through the gateway fails.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeProject } from '../src/store/trellis-home.js';
import { readEndpointRecord } from '../src/store/host/online-verdict.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { cleanupRepos, testEnv } from './helpers/repo.js';
import { loadLoop, packageCopy, startServe, type ServeProcess, type Tally } from './helpers/serve.js';
import { demoRepo } from './helpers/server.js';
import { waitFor } from './helpers/wait.js';

afterAll(cleanupRepos);

const running: { serve: ServeProcess; gw: TestGateway }[] = [];
afterAll(async () => {
  for (const { serve, gw } of running) {
    process.kill(serve.proc.pid!, 'SIGCONT');
    await serve.stop('SIGKILL');
    await gw.close();
  }
});

/** A real `trellis serve` of the demo project from a package copy, and a gateway on the same TRELLIS_HOME. */
async function serveBehindGateway(extraEnv: NodeJS.ProcessEnv = {}) {
  const dir = await demoRepo();
  const pkg = packageCopy();
  const home = join(dir, '..', 'home');
  const serve = await startServe(pkg, dir, { ...testEnv(dir), TRELLIS_HOME: home, ...extraEnv });
  const gw = await startTestGateway(home);
  running.push({ serve, gw });
  return { dir, pkg, home, serve, base: new URL(`/p/${encodeProject(dir)}/`, gw.url).href };
}

const childPort = (line: string) => Number(/port (\d+)\)/.exec(line)![1]);

/**
 * One serve and one gateway for the file (each start is a supervisor, a child and a gateway process): the
 * scenarios run one after the other on it, the reloads first, then the frozen supervisor, then a child's
 * death. `child` is the serving child's number and its announcing line (pid and port), as the last one left it.
 */
let shared: Awaited<ReturnType<typeof serveBehindGateway>>;
const child = { id: 1, line: '' };
beforeAll(async () => {
  // A long drain: an old child with a kept-alive gateway connection must still drain and exit (scenario 1).
  shared = await serveBehindGateway({ TRELLIS_DRAIN_MS: '20000' });
  child.line = await shared.serve.line(/serving .* \(child 1, /);
}, 60_000);

describe('the gateway and a serve’s child', () => {
  it('the record names the serving child, rewritten at each swap before the old child drains; 5 reloads lose no request through the gateway', async () => {
    const { dir, pkg, home, serve, base } = shared;
    const first = (await readEndpointRecord(home, dir)) as { online: true; record: { child?: string } };
    expect(first.record.child).toBe(`http://127.0.0.1:${childPort(child.line)}/`);

    const tally: Tally = { ok: 0, failed: [], children: new Set() };
    const loops = [...Array.from({ length: 4 }, () => loadLoop(base, true, tally)), ...Array.from({ length: 2 }, () => loadLoop(base, false, tally))];
    const core = join(pkg, 'dist/src/http/routes/core.js');
    const original = readFileSync(core, 'utf8');
    for (let r = 1; r <= 5; r++) {
      writeFileSync(core, `${original}\n// edit ${r}\n`);
      const switched = await serve.line(new RegExp(`switched to child ${r + 1} `));
      // Written before the switch is announced (and the old child told to drain).
      const now = await readEndpointRecord(home, dir);
      expect(now.online && now.record.child).toBe(`http://127.0.0.1:${childPort(switched)}/`);
      await waitFor(() => tally.children.has(String(r + 1)), `the gateway to reach child ${r + 1}`, 15_000);
      Object.assign(child, { id: r + 1, line: switched });
    }
    await Promise.all(loops.map((l) => l.stop()));
    expect(tally.failed).toEqual([]);
    for (let c = 1; c <= 6; c++) expect(tally.children).toContain(String(c));
    // Every old child drained and exited: the gateway's kept-alive connections did not hold one open.
    await waitFor(() => serve.lines.filter((l) => /drained and exited/.test(l)).length === 5, 'the five old children to drain', 30_000);
  });

  it('with the supervisor frozen (SIGSTOP), requests through the gateway still answer: they do not pass through its raw proxy', async () => {
    const { serve, base } = shared;
    expect((await fetch(new URL('health', base))).status).toBe(200);
    process.kill(serve.proc.pid!, 'SIGSTOP');
    try {
      const res = await fetch(new URL('api/instance', base), { signal: AbortSignal.timeout(10_000) });
      expect([res.status, res.headers.get('x-trellis-child')]).toEqual([200, String(child.id)]);
    } finally {
      process.kill(serve.proc.pid!, 'SIGCONT');
    }
  });

  it('a child that dies: requests through the gateway go to the serve’s face, which holds them until the replacement serves; the project is never called offline', async () => {
    const { serve, base } = shared;
    const tally: Tally = { ok: 0, failed: [], children: new Set() };
    const loops = [loadLoop(base, true, tally), loadLoop(base, false, tally)];
    await waitFor(() => tally.ok > 20, 'requests to flow', 15_000);
    const childPid = Number(/pid (\d+), port/.exec(child.line)![1]);
    process.kill(childPid, 'SIGKILL');
    const next = child.id + 1;
    await serve.line(new RegExp(`switched to child ${next} `));
    await waitFor(() => tally.children.has(String(next)), `the gateway to reach child ${next}`, 15_000);
    await Promise.all(loops.map((l) => l.stop()));
    // Never told the project is offline (404) while its serve replaces the child, and no GET lost (502):
    // one the death dropped is sent again on a connection of its own to the face, which holds it.
    expect(tally.failed).toEqual([]);
    expect(tally.ok).toBeGreaterThan(20);
  });
});
