import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EventSource } from 'eventsource';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { BIN, cleanupRepos, git, ok, shell, tempRepo, testEnv, trellis } from './helpers/repo.js';
import { demoRepo, post, serveDir } from './helpers/server.js';
import { waitFor } from './helpers/wait.js';

afterAll(cleanupRepos);

const json = async (r: Response) => ({ status: r.status, body: await r.json() });
const GRAMS = 'ops/inventory/stock-in-grams';
const BACK = 'ops/inventory/back-orders';

/** Adds a node declaring `scenarios` (YAML list lines) to `dir`'s spec tree and commits it. */
function declare(dir: string, node: string, scenarios: string[], commit = true): void {
  shell(dir, `mkdir -p "$(dirname specs/${node}.md)"`);
  writeFileSync(join(dir, `specs/${node}.md`), `---\nscenarios:\n${scenarios.map((s) => `  - ${s}`).join('\n')}\n---\n# ${node}\n`);
  if (commit) {
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', `declare ${node}`);
  }
}

describe('the demo project’s scenarios, run and read back', () => {
  let dir: string;
  let api: Awaited<ReturnType<typeof serveDir>>;
  beforeAll(async () => {
    dir = await demoRepo();
    api = await serveDir(dir);
  });
  afterAll(() => api.close());

  it('eval run files both readings with their output as evidence; eval ls --json shows them; git log of the eval ref is an audit', async () => {
    const readings = JSON.parse(await ok(dir, ['eval', 'run', '--json', '--by', 'ana']));
    expect(readings.map((r: { scenario: string; outcome: string }) => [r.scenario, r.outcome])).toEqual([
      [GRAMS, 'pass'],
      [BACK, 'fail'],
    ]);
    const head = git(dir, 'rev-parse', 'HEAD').trim();
    for (const r of readings) expect(r).toMatchObject({ scope: 'trunk', commit: head, by: 'ana', id: expect.stringMatching(/^[0-9a-z]{12}$/) });
    // The output is kept as evidence: what grep printed, and the failing command's own message.
    expect(await ok(dir, ['evidence', 'get', readings[0].output])).toMatch(/grams/);
    expect(await ok(dir, ['evidence', 'get', readings[1].output])).toContain("no 'Back-orders:' rule yet");

    const board = JSON.parse(await ok(dir, ['eval', 'ls', '--json']));
    expect(board.scenarios.map((s: { id: string }) => s.id)).toEqual([BACK, GRAMS]);
    const cell = board.scenarios[0].cells[0];
    expect(cell).toMatchObject({ scope: 'trunk', live: true, declared: true, last: ['fail'], readings: 1, latest: { id: readings[1].id, outcome: 'fail' } });
    expect((await json(await api.get('/api/eval'))).body).toEqual(board);

    const log = git(dir, 'log', '--format=%an|%s', 'refs/trellis/evals/ops+inventory+back-orders').trim();
    expect(log).toMatch(new RegExp(`^ana\\|measured fail in trunk at ${head.slice(0, 12)} in \\d+ ms: reading ${readings[1].id}$`));
  });

  it('the board carries each node’s latest trunk outcomes; a reading from another process moves its bytes and fires the stream', async () => {
    const es = new EventSource(new URL('/api/graph/stream', api.url).href);
    const events: { type: string; cause?: string }[] = [];
    es.addEventListener('ready', () => events.push({ type: 'ready' }));
    es.addEventListener('graph', (e) => events.push({ type: 'graph', cause: JSON.parse((e as MessageEvent).data).cause }));
    try {
      await waitFor(() => events.some((e) => e.type === 'ready'), 'the stream to be ready', 30_000);
      const before = await (await api.get('/api/graph')).text();
      const node = JSON.parse(before).nodes.find((n: { id: string }) => n.id === 'ops/inventory');
      expect(node.scenarios.map((s: { id: string; outcome: string }) => [s.id, s.outcome])).toEqual([
        [GRAMS, 'pass'],
        [BACK, 'fail'],
      ]);
      expect(JSON.parse(before).nodes.find((n: { id: string }) => n.id === 'orders').scenarios).toEqual([]);
      const id = (await ok(dir, ['eval', 'record', BACK, '--outcome', 'pass', '--score', '0.5'])).trim();
      await waitFor(() => events.some((e) => e.type === 'graph' && e.cause === 'evals'), 'a graph event caused by the evals', 30_000);
      const after = JSON.parse(await (await api.get('/api/graph')).text());
      expect(after.nodes.find((n: { id: string }) => n.id === 'ops/inventory').scenarios[1]).toEqual({ id: BACK, outcome: 'pass', reading: id });
    } finally {
      es.close();
    }
  });

  it('an eval remark is filed against a reading, appears on the scoreboard and the detail, never on an issue surface', async () => {
    const reading = JSON.parse(await ok(dir, ['eval', 'show', BACK, '--json'])).reading;
    const thread = (await ok(dir, ['issue', 'open', 'Back-order rule is missing', '--scenario', BACK, '--reading', reading.id, '--by', 'bob'])).trim();
    const viaRoute = await json(await api.get('/api/issues'));
    const opened = await json(await api.get('/api/eval'));
    expect(opened.body.scenarios.find((s: { id: string }) => s.id === BACK).cells[0].remarks).toEqual([
      { thread, concern: 'Back-order rule is missing', by: 'bob', created: expect.any(String), reading: reading.id, replies: 0 },
    ]);
    const detail = (await json(await api.get(`/api/eval/${encodeURIComponent(BACK)}`))).body;
    expect(detail).toMatchObject({ state: 'measured', reading: { id: reading.id }, remarks: [{ thread, reading: reading.id }] });
    // Never an issue: not in the list, not shown, not on the board, not in `issue ls`.
    expect(viaRoute.body.issues.some((i: { id: string }) => i.id === thread)).toBe(false);
    expect((await api.get(`/api/issues/${thread}`)).status).toBe(404);
    expect(await ok(dir, ['issue', 'ls', '--all', '--json'])).not.toContain(thread);
    expect(await (await api.get('/api/graph')).text()).not.toContain(thread);
    // The route files one too; a reading that does not exist is refused.
    const routed = await json(await api.get('/api/issues', post({ concern: 'Flaky?', scenario: BACK, reading: reading.id, by: 'cy' })));
    expect(routed).toMatchObject({ status: 201, body: { id: expect.any(String), scenario: BACK, reading: reading.id } });
    expect((await json(await api.get('/api/issues', post({ concern: 'x', scenario: BACK, reading: 'nope' })))).status).toBe(404);
    const replied = await json(await api.get(`/api/eval-remarks/${thread}/reply`, post({ body: 'looking', by: 'dee' })));
    expect(replied).toMatchObject({ status: 200, body: { reply: 1, loopedIn: null, thread: { id: thread, reading: reading.id, originator: reading.by } } });
    expect((await json(await api.get(`/api/eval-remarks/${thread}`))).body.replies).toEqual([{ by: 'dee', at: expect.any(String), body: 'looking' }]);
    expect((await api.get('/api/eval-remarks/pwreset30min')).status).toBe(404);
    expect((await api.get('/api/eval-remarks/pwreset30min/reply', post({ body: 'x' }))).status).toBe(404);
    const missing = await trellis(dir, ['issue', 'open', 'x', '--scenario', BACK, '--reading', 'nope']);
    expect([missing.code, missing.stderr]).toEqual([1, expect.stringContaining("no reading 'nope'")]);
  });

  it('bad input: an unknown scenario is 404 / exit 1; an outcome outside the set is 400 / exit 2', async () => {
    expect(await json(await api.get('/api/eval/no/such'))).toMatchObject({ status: 404, body: { error: { code: 'SCENARIO_NOT_FOUND' } } });
    expect((await json(await api.get('/api/eval/no/such/readings', post({ outcome: 'pass' })))).body.error.code).toBe('SCENARIO_NOT_FOUND');
    const bad = await json(await api.get(`/api/eval/${BACK}/readings`, post({ outcome: 'flaky' })));
    expect(bad).toMatchObject({ status: 400, body: { error: { code: 'INVALID_INPUT', message: expect.stringContaining('pass, fail, error') } } });
    expect((await json(await api.get(`/api/eval/${BACK}/readings`, post({ outcome: 'pass', extra: 1 })))).status).toBe(400);
    expect((await json(await api.get(`/api/eval/${BACK}/readings`, post('{')))).status).toBe(400);
    expect((await json(await api.get(`/api/eval/${BACK}/readings`, post({ outcome: 'pass', scope: 'gone' })))).status).toBe(404);
    expect((await json(await api.get('/api/eval/%E0%A4%A'))).status).toBe(400);

    const unknown = await trellis(dir, ['eval', 'show', 'no/such']);
    expect([unknown.code, unknown.stderr]).toEqual([1, expect.stringContaining("no scenario 'no/such'")]);
    expect((await trellis(dir, ['eval', 'run', 'no/such'])).code).toBe(1);
    expect((await trellis(dir, ['eval', 'record', 'no/such', '--outcome', 'pass'])).code).toBe(1);
    const outcome = await trellis(dir, ['eval', 'record', BACK, '--outcome', 'flaky']);
    expect([outcome.code, outcome.stderr]).toEqual([2, expect.stringContaining('--outcome must be one of pass, fail, error')]);
    expect((await trellis(dir, ['eval', 'record', BACK, '--outcome', 'pass', '--score', 'high'])).code).toBe(2);
    expect((await trellis(dir, ['eval', 'nope'])).code).toBe(2);

    // The good route answers 201 with the reading, filed by the project's git user.name unless the body says who.
    const good = await json(await api.get(`/api/eval/${encodeURIComponent(BACK)}/readings`, post({ outcome: 'error', durationMs: 5 })));
    expect(good).toMatchObject({ status: 201, body: { scenario: BACK, scope: 'trunk', outcome: 'error', by: 'human', durationMs: 5, output: null } });
  });
});

describe('eval-detail states, end to end', () => {
  let dir: string;
  let wt: string;
  let api: Awaited<ReturnType<typeof serveDir>>;
  beforeAll(async () => {
    dir = tempRepo();
    declare(dir, 'shop/cart', ['{ id: cart/adds, run: "true" }', '{ id: cart/removes, run: "true" }']);
    wt = join(dir, '..', `${dir.split('/').pop()}-sess`);
    git(dir, 'worktree', 'add', '-q', '-b', 'trellis/sess-1', wt);
    // A scenario that exists only in the session's worktree (not committed there either).
    declare(wt, 'shop/wishlist', ['{ id: wishlist/keeps, run: "echo kept" }'], false);
    api = await serveDir(dir);
  });
  afterAll(async () => {
    await api.close();
    shell(dir, `rm -rf '${wt}'`);
  });

  const detail = async (id: string, scope?: string) => json(await api.get(`/api/eval/${id}${scope ? `?scope=${scope}` : ''}`));

  it('unmeasured: declared, never measured in that scope', async () => {
    expect((await detail('cart/adds')).body).toMatchObject({ scenario: 'cart/adds', scope: 'trunk', state: 'unmeasured', declared: true, declaredIn: ['trunk', 'sess-1'], reading: null, readings: [] });
    expect((await detail('cart/adds')).body.fallback).toBeUndefined();
  });

  it('measured in one scope is still unmeasured in another; ids are taken literally and percent-encoded', async () => {
    await ok(dir, ['eval', 'run', 'cart/adds', '--scope', 'sess-1', '--by', 'sess-1']);
    const inSession = (await detail('cart%2Fadds', 'sess-1')).body;
    expect(inSession).toMatchObject({ scope: 'sess-1', state: 'measured', reading: { outcome: 'pass', scope: 'sess-1', by: 'sess-1' }, last: ['pass'] });
    expect(inSession.reading.commit).toBe(git(wt, 'rev-parse', 'HEAD').trim());
    // The branch name resolves to the same scope.
    expect((await detail('cart/adds', 'trellis/sess-1')).body).toMatchObject({ scope: 'sess-1', state: 'measured' });
    expect((await detail('cart/adds')).body).toMatchObject({ scope: 'trunk', state: 'unmeasured' });
  });

  it('a scenario that exists only in a worktree: absent-from-trunk on trunk, measurable in its scope', async () => {
    expect((await detail('wishlist/keeps')).body).toMatchObject({ scope: 'trunk', state: 'absent-from-trunk', declared: false, declaredIn: ['sess-1'], reading: null });
    expect((await detail('wishlist/keeps', 'sess-1')).body).toMatchObject({ scope: 'sess-1', state: 'unmeasured', declared: true });
    const [r] = JSON.parse(await ok(dir, ['eval', 'run', 'wishlist/keeps', '--scope', 'sess-1', '--json']));
    expect(r).toMatchObject({ scope: 'sess-1', outcome: 'pass' });
    expect((await ok(dir, ['evidence', 'get', r.output])).trim()).toBe('kept');
    expect((await detail('wishlist/keeps', 'sess-1')).body).toMatchObject({ state: 'measured', reading: { id: r.id } });
    expect((await detail('wishlist/keeps')).body.state).toBe('absent-from-trunk');
    // Trunk does not declare it, so it cannot be run there.
    expect((await trellis(dir, ['eval', 'run', 'wishlist/keeps'])).code).toBe(1);
  });

  it('the session’s worktree removed after it was measured: the scope falls back to trunk, said explicitly', async () => {
    git(dir, 'worktree', 'remove', '--force', wt);
    const r = await detail('cart/adds', 'sess-1');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ scope: 'trunk', fallback: 'trunk', requested: 'sess-1', reason: expect.stringContaining("'trellis/sess-1'"), state: 'unmeasured' });
    // The scope resolves first: a scenario only that worktree declared is declared nowhere live now, but
    // its ref still holds its readings: absent-from-trunk with them, never a 404.
    const gone = await detail('wishlist/keeps', 'sess-1');
    expect(gone.status).toBe(200);
    expect(gone.body).toMatchObject({ scope: 'trunk', fallback: 'trunk', requested: 'sess-1', state: 'absent-from-trunk', declared: false, declaredIn: [], declaration: null });
    expect(gone.body.readings.map((r: { scope: string; outcome: string }) => [r.scope, r.outcome])).toEqual([['sess-1', 'pass']]);
    expect((await detail('wishlist/keeps')).body).toMatchObject({ state: 'absent-from-trunk', measuredIn: ['sess-1'] });
    const shown = await trellis(dir, ['eval', 'show', 'wishlist/keeps', '--scope', 'sess-1', '--json']);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ state: 'absent-from-trunk', fallback: 'trunk', readings: [{ scope: 'sess-1' }] });
    // Its readings stay on the scoreboard, in a cell that says the scope is gone.
    const board = (await json(await api.get('/api/eval'))).body;
    const kept = board.scenarios.find((s: { id: string }) => s.id === 'wishlist/keeps');
    expect(kept).toMatchObject({ node: null, run: null, declaredIn: [], cells: [{ scope: 'sess-1', live: false, declared: false, readings: 1 }] });
    expect(board.scopes.map((s: { name: string }) => s.name)).toEqual(['trunk']);
    const cells = board.scenarios.find((s: { id: string }) => s.id === 'cart/adds').cells;
    expect(cells.map((c: { scope: string; live: boolean }) => [c.scope, c.live])).toEqual([
      ['trunk', true],
      ['sess-1', false],
    ]);
    // The CLI says the same, and a write into the vanished scope is refused rather than redirected.
    const cli = JSON.parse(await ok(dir, ['eval', 'show', 'cart/adds', '--scope', 'sess-1', '--json']));
    expect(cli).toMatchObject({ scope: 'trunk', fallback: 'trunk', requested: 'sess-1', state: 'unmeasured' });
    expect((await trellis(dir, ['eval', 'record', 'cart/adds', '--outcome', 'pass', '--scope', 'sess-1'])).code).toBe(1);
  });

  it('a malformed declaration and a duplicate id are problems on their nodes; the good scenarios still serve', async () => {
    declare(dir, 'shop/bad', ['{ id: "not an id", run: "true" }', '{ id: bad/ok, run: "true" }']);
    declare(dir, 'shop/zdup', ['{ id: cart/adds, run: "false" }']);
    const specs = (await json(await api.get('/api/specs'))).body;
    expect(specs.find((n: { id: string }) => n.id === 'shop/bad').problem).toMatch(/scenarios\[0\].*not a scenario id/);
    expect(specs.find((n: { id: string }) => n.id === 'shop/zdup').problem).toMatch(/'cart\/adds' is already declared by node 'shop\/cart'/);
    const board = JSON.parse(await ok(dir, ['eval', 'ls', '--json']));
    expect(board.scenarios.map((s: { id: string; node: string }) => [s.id, s.node])).toEqual([
      ['bad/ok', 'shop/bad'],
      ['cart/adds', 'shop/cart'],
      ['cart/removes', 'shop/cart'],
      // Declared nowhere live, still listed with its readings.
      ['wishlist/keeps', null],
    ]);
  });
});

/** Kills whatever a failed run left behind, so no test leaves a process however it ends. */
function reap(marker: string): void {
  for (const pid of processesWith(marker)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
}

/**
 * The live `sleep <seconds>` processes themselves: their argv is `sleep\0<seconds>\0`, which neither the
 * `sh -c` running the scenario nor a forked child of it that has not exec'd yet matches.
 */
const sleepers = (seconds: string): number[] => processesWith(`sleep\u0000${seconds}\u0000`);

/** Processes whose command line contains `marker`, read from /proc. */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker)) found.push(Number(pid));
    } catch {
      // Exited while we looked.
    }
  }
  return found;
}

describe('a scenario whose command hangs', () => {
  it('is killed at its timeout with its children, no process left, outcome error', async () => {
    const dir = tempRepo();
    const marker = `${process.pid}${Date.now() % 100000}`;
    // A child in the background and one in the foreground, both sleeping far past the timeout.
    // A 5 s timeout leaves the /proc check below time to see them live on a loaded machine.
    declare(dir, 'slow', [`{ id: slow/hangs, run: "sleep 7${marker} & sleep 8${marker}; echo never", timeoutS: 5 }`]);
    onTestFinished(() => reap(marker));
    const child = spawn(process.execPath, [BIN, 'eval', 'run', '--json'], { cwd: dir, env: testEnv(dir), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    // The /proc check sees the live children while the scenario runs...
    await waitFor(() => sleepers(`7${marker}`).length > 0 && sleepers(`8${marker}`).length > 0, 'both sleeps to start', 30_000);
    expect(sleepers(`7${marker}`)).toHaveLength(1);
    expect(sleepers(`8${marker}`)).toHaveLength(1);
    expect(await exited).toBe(0);
    // ...and none once the run is over: neither sleep nor the shell that ran them.
    expect(processesWith(marker)).toEqual([]);
    const [reading] = JSON.parse(out);
    expect(reading).toMatchObject({ scenario: 'slow/hangs', outcome: 'error' });
    expect(reading.durationMs).toBeGreaterThanOrEqual(5000);
    expect(reading.durationMs).toBeLessThan(12_000);
    expect(await ok(dir, ['evidence', 'get', reading.output])).toContain('killed with its process group after the 5 s timeout');
  });
});

describe('readings that cannot be read', () => {
  it('are reported by scenario while every other scenario still lists; the cache is a file of its own', async () => {
    const dir = tempRepo();
    declare(dir, 'n', ['{ id: n/good, run: "true" }', '{ id: n/bad, run: "true" }']);
    await ok(dir, ['eval', 'run', 'n/good']);
    const blob = shell(dir, `printf '{"v":1,"type":"measured"}' | git hash-object -w --stdin`).trim();
    const tree = shell(dir, `printf '100644 blob ${blob}\tevent.json\n' | git mktree`).trim();
    const commit = shell(dir, `git commit-tree ${tree} -m 'hand-made'`).trim();
    git(dir, 'update-ref', 'refs/trellis/evals/n+bad', commit);
    const r = await trellis(dir, ['eval', 'ls', '--json']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`trellis: the readings of n/bad are unreadable (refs/trellis/evals/n+bad at ${commit})`);
    const board = JSON.parse(r.stdout);
    expect(board.problems).toEqual([expect.objectContaining({ id: 'n+bad', commit })]);
    expect(board.scenarios.find((s: { id: string }) => s.id === 'n/good').cells[0].latest.outcome).toBe('pass');
    // The evals cache is its own: its header names its own journal, which holds the good stream (and only folded ones).
    const header = JSON.parse(readFileSync(join(dir, '.git/trellis/cache/evals.json'), 'utf8')) as { journal: string };
    const journal = readFileSync(join(dir, '.git/trellis/cache', header.journal), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string });
    expect(journal.map((l) => l.id)).toContain('n+good');
    expect(journal.map((l) => l.id)).not.toContain('n+bad');
    expect(JSON.parse(await ok(dir, ['eval', 'show', 'n/bad', '--json']))).toMatchObject({ state: 'unmeasured', problem: expect.stringContaining('refs/trellis/evals/n+bad') });
    // A write to the unreadable stream is refused, naming the ref, rather than appending to it.
    const w = await trellis(dir, ['eval', 'record', 'n/bad', '--outcome', 'pass']);
    expect([w.code, w.stderr]).toEqual([1, expect.stringContaining("inspect it with 'git log refs/trellis/evals/n+bad'")]);
  });
});

describe('a scenario run interrupted', () => {
  it('a signal to trellis ends the scenario’s process group too', async () => {
    const dir = tempRepo();
    const marker = `${process.pid}${(Date.now() + 7) % 100000}`;
    declare(dir, 'slow', [`{ id: slow/forever, run: "sleep 6${marker} & sleep 9${marker}", timeoutS: 600 }`]);
    onTestFinished(() => reap(marker));
    const child = spawn(process.execPath, [BIN, 'eval', 'run'], { cwd: dir, env: testEnv(dir), stdio: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)));
    await waitFor(() => sleepers(`6${marker}`).length > 0 && sleepers(`9${marker}`).length > 0, 'both sleeps to start', 30_000);
    expect(sleepers(`6${marker}`)).toHaveLength(1);
    child.kill('SIGTERM');
    expect(await exited).toBe('SIGTERM');
    // SIGKILL is delivered when the target next runs: wait (bounded) for the kernel to finish it.
    await waitFor(() => processesWith(`${marker}`).filter((p) => p !== process.pid).length === 0, 'the scenario’s processes to end', 30_000);
    expect(processesWith(marker)).toEqual([]);
    // Nothing was filed for the run that did not finish.
    expect(git(dir, 'for-each-ref', 'refs/trellis/evals')).toBe('');
  });
});

describe('eval ls --json into a pipe', () => {
  it('a scoreboard of more than 2 MB arrives whole in a slow JSON parser', async () => {
    const dir = tempRepo();
    const filler = 'x'.repeat(1000);
    const lines = Array.from({ length: 2200 }, (_, i) => `{ id: big/s${i}, run: "true # ${filler}" }`);
    declare(dir, 'big', lines);
    await ok(dir, ['eval', 'record', 'big/s0', '--outcome', 'pass']);
    const parser = join(dir, 'parse.mjs');
    writeFileSync(
      parser,
      `let text = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => { text += d; process.stdin.pause(); setTimeout(() => process.stdin.resume(), 1); });
process.stdin.on('end', () => { const b = JSON.parse(text); console.log(JSON.stringify({ bytes: Buffer.byteLength(text), n: b.scenarios.length, first: b.scenarios[0].cells[0].latest.outcome })); });
`,
    );
    const out = JSON.parse(shell(dir, `node '${BIN}' eval ls --json | node ${parser}`));
    expect(out.bytes).toBeGreaterThan(2_000_000);
    expect(out).toMatchObject({ n: 2200, first: 'pass' });
  });
});

describe('replies on an eval remark', () => {
  it('loop in the reading’s filer (not the remark’s author) when that session is online; issue verbs refuse the thread without writing', async () => {
    const { openIssue, replyToIssue } = await import('../src/store/issues/verbs.js');
    const { recordReading } = await import('../src/store/eval/verbs.js');
    const { replyToRemark, showRemark } = await import('../src/store/eval/remarks.js');
    const { openProject } = await import('../src/store/compose/open-project.js');
    const dir = tempRepo();
    declare(dir, 'n', ['{ id: n/works, run: "true" }']);
    const online = new Set<string>();
    const told: [string, string][] = [];
    const p = openProject(dir, { sessions: { isOnline: (id) => online.has(id), notify: async (id, msg) => void told.push([id, msg]) } });
    const reading = await recordReading(p, 'n/works', { outcome: 'fail', by: 'sess-7' });
    const { id } = await openIssue(p, { concern: 'Fails on CI only', scenario: 'n/works', reading: reading.id, by: 'bob' });
    expect(await showRemark(p, id)).toMatchObject({ scenario: 'n/works', reading: reading.id, by: 'bob', originator: 'sess-7' });

    expect((await replyToRemark(p, id, { body: 'while offline', by: 'cy' })).loopedIn).toBeNull();
    online.add('sess-7');
    online.add('bob');
    const r = await replyToRemark(p, id, { body: 'now online', by: 'cy' });
    expect([r.loopedIn, r.reply]).toEqual(['sess-7', 2]);
    expect(told).toEqual([['sess-7', expect.stringMatching(/^Reply from cy on eval remark "Fails on CI only" about n\/works \S+:\n\nnow online\n/)]]);
    expect((await replyToRemark(p, id, { body: 'my own', by: 'sess-7' })).loopedIn).toBeNull();

    const tip = git(dir, 'rev-parse', `refs/trellis/issues/${id}`);
    await expect(replyToIssue(p, id, { body: 'as an issue', by: 'cy' })).rejects.toMatchObject({ code: 'THREAD_NOT_FOUND' });
    expect(git(dir, 'rev-parse', `refs/trellis/issues/${id}`)).toBe(tip);
    const { id: issue } = await openIssue(p, { concern: 'a real issue', by: 'bob' });
    await expect(replyToRemark(p, issue, { body: 'x', by: 'cy' })).rejects.toMatchObject({ code: 'THREAD_NOT_FOUND' });

    // The CLI and the route reach the same verbs.
    expect((await ok(dir, ['eval', 'reply', id, '--body', 'from the cli', '--by', 'dee'])).trim()).toBe('4');
    expect(JSON.parse(await ok(dir, ['eval', 'remark', id, '--json'])).replies.map((x: { by: string }) => x.by)).toEqual(['cy', 'cy', 'sess-7', 'dee']);
    expect((await trellis(dir, ['issue', 'show', id])).code).toBe(1);
  });
});
