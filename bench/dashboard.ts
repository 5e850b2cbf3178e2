/**
 * The dashboard: bundle size, first load of a big board in Chromium, and how fast a write reaches the
 * DOM of an open page. Needs Debian's chromium (`.ci/run` installs it) and a built dashboard.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { openIssue } from '../src/store/issues/verbs.js';
import { createDemoProject } from '../src/store/setup/demo.js';
import { signalSession } from '../src/store/sessions/verbs/signal-verb.js';
import { defaultRuntime } from '../src/store/sessions/verbs/runtime.js';
import { createHubServer } from '../src/gateway/hub-server.js';
import { bindPublic } from '../src/http/bind.js';
import { openProject } from '../src/store/compose/open-project.js';
import { packageRoot } from '../src/store/package-root.js';
import { boardRepo } from './graph.js';
import { BIN } from './issues.js';
import { report, round, stats } from './lib.js';

const NODES = Number(process.env.BENCH_NODES ?? 1_000);
const THREADS = Number(process.env.BENCH_THREADS ?? 10_000);
/** The little of the DOM the page-side predicates use (this file is compiled without the DOM's types; the page's CSP refuses string predicates). */
type Doc = typeof globalThis & { document: { querySelector(s: string): { textContent: string | null } | null; querySelectorAll(s: string): { length: number } } };

export async function dashboardBench(): Promise<void> {
  bundleSize();
  await inboxBench();
  const { dir, cleanup } = await boardRepo(THREADS);
  // A Trellis home of the bench's own: the serve's endpoint record never lands in the user's ~/.trellis.
  const home = mkdtempSync(join(tmpdir(), 'trellis-bench-dashboard-'));
  const { url, child } = await serve(dir, { ...process.env, TRELLIS_HOME: home });
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  try {
    // The server builds its board once; what is measured after is the page, not the first git scan.
    await (await fetch(new URL('api/graph', url))).arrayBuffer();
    // One unmeasured load first: Chromium's own first-context start-up is not the page's cost.
    const warm = await browser.newContext();
    await (await warm.newPage()).goto(new URL('#/board', url).href);
    await warm.close();
    const loads: number[] = [];
    for (let i = 0; i < 5; i++) {
      const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await ctx.newPage();
      const t0 = performance.now();
      await page.goto(new URL('#/board', url).href);
      // Interactive: every node's row is in the DOM and the live stream is connected.
      await page.waitForFunction((n) => (globalThis as Doc).document.querySelectorAll('.tree [data-node]').length >= n && (globalThis as Doc).document.querySelector('[data-testid="link-state"]')?.textContent === 'live', NODES, { polling: 'raf', timeout: 30_000 });
      loads.push(performance.now() - t0);
      await ctx.close();
    }
    report('dashboard.first-load.board', { ...stats(loads), load: loadavg().map((l) => round(l)), nodes: NODES, threads: THREADS, target_median_ms: 1000, note: 'fresh browser context each run (no cache): navigation to every row rendered and the stream live' });

    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(new URL('#/board', url).href);
    await page.waitForFunction(() => (globalThis as Doc).document.querySelector('[data-testid="link-state"]')?.textContent === 'live', undefined, { timeout: 30_000 });
    const writer = openProject(dir);
    const updates: number[] = [];
    const writes: number[] = [];
    for (let i = 0; i < 20; i++) {
      const node = `area${(i * 7) % 50}/node${i * 7}`;
      const badge = `[data-testid="badge-${node}"]`;
      await page.waitForSelector(badge, { state: "attached" });
      const before = await page.locator(badge).textContent();
      const t0 = performance.now();
      // The write the CLI's `issue open --node` makes (the same verb), from another project handle.
      await openIssue(writer, { concern: `bench ${i}`, nodes: [node], by: 'bench' });
      writes.push(performance.now() - t0);
      await page.waitForFunction(([sel, was]) => (globalThis as Doc).document.querySelector(sel!)?.textContent !== was, [badge, before] as const, { polling: 'raf', timeout: 10_000 });
      updates.push(performance.now() - t0);
    }
    report('dashboard.live-update', { ...stats(updates), load: loadavg().map((l) => round(l)), write_median_ms: stats(writes).median_ms, target_median_ms: 150, note: 'issue open on a node → that node’s badge changed in an open page (write, watcher, SSE, conditional GET, render)' });
  } finally {
    await browser.close();
    child.kill('SIGINT');
    await new Promise((r) => child.once('exit', r));
    cleanup();
    rmSync(home, { recursive: true, force: true });
  }
}

/** JavaScript shipped to the browser, gzipped, excluding the terminal (xterm.js) chunk. */
function bundleSize(): void {
  const assets = join(packageRoot().dir, 'dist', 'dashboard', 'assets');
  const js = readdirSync(assets).filter((f) => f.endsWith('.js') && !/xterm/i.test(f));
  const raw = js.reduce((s, f) => s + readFileSync(join(assets, f)).length, 0);
  const gz = js.reduce((s, f) => s + gzipSync(readFileSync(join(assets, f)), { level: 9 }).length, 0);
  report('dashboard.bundle.js', { files: js.length, raw_kb: round(raw / 1024), gzip_kb: round(gz / 1024), target_gzip_kb: 120, note: 'excluding xterm.js' });
  // The terminal's own chunk, loaded only by a session page (`import()` of src/dashboard/src/xterm-terminal.ts).
  const xterm = readdirSync(assets).filter((f) => f.endsWith('.js') && /xterm/i.test(f));
  const xRaw = xterm.reduce((s, f) => s + readFileSync(join(assets, f)).length, 0);
  const xGz = xterm.reduce((s, f) => s + gzipSync(readFileSync(join(assets, f)), { level: 9 }).length, 0);
  report('dashboard.bundle.xterm-chunk', { files: xterm.length, raw_kb: round(xRaw / 1024), gzip_kb: round(xGz / 1024), note: 'xterm.js + the pane terminal, a lazy chunk of its own (0 files would mean xterm was not split)' });
}

/**
 * The host inbox: two demo projects behind one gateway, the host's `#/inbox` open in Chromium; a session
 * in the other project starts waiting (the hook's `turn-end`, written as `trellis session signal` writes
 * it) or stops waiting (`busy`), and the time until the inbox's DOM shows it is measured. The path:
 * the session ref moves, that project's watcher and board stream, the gateway's feed recomputing the
 * list, `/projects/stream`, the page's render.
 */
async function inboxBench(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), 'trellis-bench-inbox-'));
  const a = join(home, 'a');
  const b = join(home, 'b');
  await createDemoProject(a);
  await createDemoProject(b);
  writeFileSync(join(home, 'projects.json'), JSON.stringify({ version: 1, projects: [a, b].map((root) => ({ root, addedAt: new Date().toISOString() })) }));
  const env = { ...process.env, TRELLIS_HOME: home };
  const servers = [await serve(a, env), await serve(b, env)];
  const hub = createHubServer({ home, tls: false });
  const port = await bindPublic(hub.server, 0, '127.0.0.1');
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  try {
    const project = openProject(b);
    const spawned = spawnSync(process.execPath, [BIN, 'session', 'spawn', 'Bench the inbox', '--harness', 'shell'], { cwd: b, env, encoding: 'utf8' });
    const id = spawned.stdout.trim();
    if (spawned.status !== 0 || !id) throw new Error(`session spawn failed: ${spawned.stderr}`);
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`http://127.0.0.1:${port}/#/inbox`);
    await page.waitForFunction(() => (globalThis as Doc).document.querySelector('[data-testid="link-state"]')?.textContent === 'live', undefined, { timeout: 30_000 });
    const shown = `[data-testid="inbox"] [data-session="${id}"]`;
    const samples: number[] = [];
    for (let i = 0; i < 10; i++) {
      for (const [event, present] of [['turn-end', true], ['busy', false]] as const) {
        const t0 = performance.now();
        await signalSession(project, defaultRuntime(env), id, event, null);
        await page.waitForFunction(([sel, want]) => ((globalThis as Doc).document.querySelectorAll(sel!).length > 0) === want, [shown, present] as const, { polling: 'raf', timeout: 10_000 });
        samples.push(performance.now() - t0);
      }
    }
    report('dashboard.inbox-update', { ...stats(samples), target_median_ms: 1000, load: loadavg().map((l) => round(l)), note: 'a session in another project starts or stops waiting → its entry appears in / leaves the host inbox of an open page (session ref, the project’s stream, the gateway feed, /projects/stream, render)' });
    spawnSync(process.execPath, [BIN, 'session', 'close', id], { cwd: b, env });
  } finally {
    await browser.close();
    await hub.close();
    for (const { child } of servers) {
      child.kill('SIGINT');
      await new Promise((r) => child.once('exit', r));
    }
    spawnSync('tmux', ['-S', join(home, 'tmux.sock'), 'kill-server']);
    rmSync(home, { recursive: true, force: true });
  }
}

function serve(dir: string, env: NodeJS.ProcessEnv = process.env): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /at (http:\/\/\S+)/.exec(out);
      if (m) resolve({ url: m[1]!, child });
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}`)));
  });
}
