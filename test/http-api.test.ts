import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { EventSource } from 'eventsource';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupRepos, git, ok, trellis } from './helpers/repo.js';
import { demoRepo, post, serveDir } from './helpers/server.js';
import { projectApp } from '../src/http/app.js';
import { serveProject } from '../src/http/serve.js';
import { LiveProject } from '../src/store/board/live.js';
import { openProject } from '../src/store/compose/open-project.js';

let dir: string;
let api: Awaited<ReturnType<typeof serveDir>>;

beforeAll(async () => {
  dir = await demoRepo();
  api = await serveDir(dir);
});
afterAll(async () => {
  await api.close();
  cleanupRepos();
});

const json = async (r: Response) => ({ status: r.status, body: await r.json() });

describe('identity and readiness', () => {
  it('GET /health answers without touching git; /api/instance names the instance and the root', async () => {
    expect(await json(await api.get('/health'))).toEqual({ status: 200, body: { ok: true, instanceId: api.instanceId, pid: process.pid } });
    const inst = await json(await api.get('/api/instance'));
    expect(inst.body).toMatchObject({ instanceId: api.instanceId, root: dir });
  });

  it('building the app starts no session supervisor; the entry that serves it starts them, and its close stops them', async () => {
    const project = openProject(dir);
    // The supervisors follow the live view's bus (a session's change runs the queue): their listener shows
    // them, beside the graph stream's fan-out, which the app's routes subscribe as they are built.
    const listeners = (live: LiveProject) => live.bus.all.get('change')?.length ?? 0;
    const bare = new LiveProject(project);
    projectApp(project, bare, 'built-only');
    const routes = listeners(bare);
    const served = await serveProject(project, { port: 0 });
    expect(listeners(served.live)).toBe(routes + 1);
    await served.close();
    expect(listeners(served.live)).toBe(routes);
  });

  it('unknown routes are JSON 404s', async () => {
    expect(await json(await api.get('/api/nope'))).toEqual({ status: 404, body: { error: { code: 'NOT_FOUND', message: 'no route GET /api/nope' } } });
  });
});

describe('GET /api/graph', () => {
  it('is byte-identical to `trellis graph --json`, carries an ETag, and answers a match with a bodyless 304', async () => {
    const r = await api.get('/api/graph');
    const bytes = await r.text();
    expect(r.status).toBe(200);
    const etag = r.headers.get('etag')!;
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect(await ok(dir, ['graph', '--json'])).toBe(bytes);

    const board = JSON.parse(bytes);
    expect(board.nodes).toHaveLength(20);
    expect(board.sessions).toEqual([]);
    expect(board.overlay).toEqual([]);
    const search = board.nodes.find((n: { id: string }) => n.id === 'catalog/search');
    expect(search.openIssues.map((i: { id: string }) => i.id)).toEqual(['srch4nothing']);
    // the eval-remark thread is bound to checkout/receipts but never shows
    expect(board.nodes.find((n: { id: string }) => n.id === 'checkout/receipts').issues).toEqual([]);

    const again = await api.get('/api/graph', { headers: { 'If-None-Match': etag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
  });

  it('changes bytes and ETag on a thread write made by the CLI in another process', async () => {
    const before = await api.get('/api/graph');
    const etag = before.headers.get('etag')!;
    const stamp = JSON.parse(await before.text()).freshness;
    await ok(dir, ['issue', 'reply', 'currencyq001', '--body', 'EUR only']);
    const after = await api.get('/api/graph', { headers: { 'If-None-Match': etag } });
    expect(after.status).toBe(200);
    const board = JSON.parse(await after.text());
    expect(board.freshness.replies).toBe(stamp.replies + 1);
    expect(board.freshness.revision).toBe(stamp.revision + 1);
    expect(await ok(dir, ['graph', '--json'])).toBe(JSON.stringify(board) + '\n');
  });
});

describe('GET /api/graph/stream', () => {
  it('a real EventSource client receives an event after a CLI write in another process and after a spec edit', async () => {
    const es = new EventSource(new URL('/api/graph/stream', api.url).href);
    const events: { type: string; data: { cause?: string; freshness: { replies: number } } }[] = [];
    const waitFor = (pred: () => boolean) =>
      new Promise<void>((resolve, reject) => {
        const check = () => pred() && (resolve(), true);
        if (check()) return;
        const onEvent = () => check() && cleanup();
        const cleanup = () => {
          es.removeEventListener('ready', onEvent);
          es.removeEventListener('graph', onEvent);
        };
        es.addEventListener('ready', onEvent);
        es.addEventListener('graph', onEvent);
        es.onerror = (e) => reject(new Error(`stream error: ${String((e as { message?: string }).message)}`));
      });
    const record = (type: string) => (e: MessageEvent) => events.push({ type, data: JSON.parse(e.data) });
    es.addEventListener('ready', record('ready'));
    es.addEventListener('graph', record('graph'));
    try {
      await waitFor(() => events.some((e) => e.type === 'ready'));
      const replies = events[0]!.data.freshness.replies;
      await ok(dir, ['issue', 'reply', 'pwreset30min', '--body', 'agreed, 2 hours']);
      await waitFor(() => events.some((e) => e.type === 'graph' && e.data.cause === 'issues'));
      expect(events.find((e) => e.type === 'graph')!.data.freshness.replies).toBe(replies + 1);

      const path = join(dir, 'specs/cart/index.md');
      writeFileSync(path, readFileSync(path, 'utf8').replace('title: Cart', 'title: Basket'));
      await waitFor(() => events.some((e) => e.type === 'graph' && e.data.cause === 'specs'));
      expect(JSON.parse(await (await api.get('/api/graph')).text()).nodes.find((n: { id: string }) => n.id === 'cart').title).toBe('Basket');
    } finally {
      es.close();
    }
  });
});

describe('spec routes', () => {
  it('lists nodes, serves the search corpus from the file system, and one node’s body and parts', async () => {
    const list = await json(await api.get('/api/specs'));
    expect(list.body.map((n: { id: string }) => n.id)).toContain('accounts/sign-in');
    expect(list.body[0]).not.toHaveProperty('body');
    const lite = await json(await api.get('/api/specs/lite'));
    expect(lite.body.find((n: { id: string }) => n.id === 'catalog/search').body).toContain('earl gray');
    const content = await json(await api.get('/api/specs/catalog/search/content'));
    expect(content.body.parts.map((p: { title: string }) => p.title)).toEqual(['Matching', 'Ranking']);
    expect(await json(await api.get('/api/specs/catalog%2Fsearch/content'))).toEqual(content);
  });

  it('follows a node’s history across a rename and serves each version’s line diff', async () => {
    const history = (await json(await api.get('/api/specs/accounts/sign-in/history'))).body;
    expect(history.map((v: { subject: string; change: string }) => [v.subject, v.change])).toEqual([
      ['Rename login to sign-in', 'renamed'],
      ['Accounts: sign-up and login', 'added'],
    ]);
    const rename = await json(await api.get(`/api/specs/accounts/sign-in/diff/${history[0].hash.slice(0, 10)}`));
    expect(rename.body).toMatchObject({ path: 'specs/accounts/sign-in.md', previousPath: 'specs/accounts/login.md', change: 'renamed', additions: 3, deletions: 2 });
    expect(rename.body.diff).toContain('+- The message never says which of the two was wrong.');
    const first = await json(await api.get(`/api/specs/accounts/sign-in/diff/${history[1].hash}`));
    expect(first.body).toMatchObject({ path: 'specs/accounts/login.md', change: 'added', deletions: 0 });
    expect(first.body.additions).toBe(readFileSync(join(dir, 'specs/accounts/sign-in.md'), 'utf8').split('\n').length - 2);
  });

  it('404s unknown nodes, unknown versions, and per-node routes that do not exist', async () => {
    expect((await api.get('/api/specs/nope/history')).status).toBe(404);
    expect((await json(await api.get('/api/specs/catalog/search/diff/abcdef0'))).body.error.code).toBe('VERSION_NOT_FOUND');
    expect((await api.get('/api/specs/catalog/search/diff/zzzz')).status).toBe(404);
    expect((await api.get('/api/specs/catalog/search/frobnicate')).status).toBe(404);
    expect((await api.get('/api/specs/%E0%A4%A')).status).toBe(400);
  });

  it('reports a node with malformed front matter by name while the rest serves', async () => {
    const path = join(dir, 'specs/ops/broken.md');
    writeFileSync(path, '---\ntitle: [oops\n---\n# Broken\n');
    try {
      const list = (await json(await api.get('/api/specs'))).body;
      expect(list.find((n: { id: string }) => n.id === 'ops/broken').problem).toMatch(/^front matter:/);
      expect(list.length).toBe(21);
      expect((await api.get('/api/graph')).status).toBe(200);
    } finally {
      unlinkSync(path);
    }
  });

  it('GET /api/edit: a tracked node’s working-tree delta, and a new untracked node as all additions', async () => {
    const path = join(dir, 'specs/orders/history.md');
    const original = readFileSync(path, 'utf8');
    writeFileSync(path, `${original}\n## Export\nCSV download of all orders.\n`);
    writeFileSync(join(dir, 'specs/orders/returns.md'), '# Returns\n\nWithin 14 days.\n');
    try {
      const modified = await json(await api.get('/api/edit?node=orders/history'));
      expect(modified.body).toMatchObject({ node: 'orders/history', worktree: dir, state: 'modified', additions: 3, deletions: 0 });
      expect(modified.body.forkPoint).toBe(git(dir, 'rev-parse', 'HEAD').trim());
      const added = await json(await api.get('/api/edit?node=orders/returns'));
      expect(added.body).toMatchObject({ state: 'added', additions: 3, deletions: 0 });
      expect(added.body.diff).toContain('+Within 14 days.');
      expect((await json(await api.get('/api/edit?node=orders/index'))).body).toMatchObject({ state: 'unchanged', diff: '' });
      expect((await api.get('/api/edit')).status).toBe(400);
      expect((await api.get('/api/edit?node=orders/history&worktree=nope')).status).toBe(404);
    } finally {
      writeFileSync(path, original);
      unlinkSync(join(dir, 'specs/orders/returns.md'));
    }
  });

  it('the board’s overlay lists what each linked worktree changed since its fork point', async () => {
    const wt = join(dir, '..', 'wt-search');
    git(dir, 'worktree', 'add', '-q', '-b', 'search-work', wt);
    try {
      writeFileSync(join(wt, 'specs/catalog/search.md'), `${readFileSync(join(wt, 'specs/catalog/search.md'), 'utf8')}\nMore.\n`);
      writeFileSync(join(wt, 'specs/catalog/filters.md'), '# Filters\n');
      // A node the worktree adds and commits: it exists only there, and the board names it with its title.
      writeFileSync(join(wt, 'specs/catalog/wishlist.md'), '---\ntitle: Wish list\n---\n# Wishes\n');
      git(wt, 'add', 'specs/catalog/wishlist.md');
      git(wt, 'commit', '-qm', 'wish list');
      const board = JSON.parse(await (await api.get('/api/graph')).text());
      expect(board.overlay).toEqual([
        {
          worktree: wt,
          branch: 'search-work',
          head: git(wt, 'rev-parse', 'HEAD').trim(),
          forkPoint: git(dir, 'rev-parse', 'HEAD').trim(),
          nodes: ['catalog/filters', 'catalog/search', 'catalog/wishlist'],
          added: [
            { id: 'catalog/filters', title: 'Filters', path: 'specs/catalog/filters.md' },
            { id: 'catalog/wishlist', title: 'Wish list', path: 'specs/catalog/wishlist.md' },
          ],
        },
      ]);
      expect(board.nodes.map((n: { id: string }) => n.id)).not.toContain('catalog/wishlist');
      expect(await ok(dir, ['graph', '--json'])).toBe(JSON.stringify(board) + '\n');
      expect(await ok(dir, ['board'])).toContain(`worktree ${wt} (search-work, forked at ${git(dir, 'rev-parse', 'HEAD').trim().slice(0, 10)}): catalog/filters, catalog/search, catalog/wishlist; new: catalog/filters “Filters”, catalog/wishlist “Wish list”`);
      const delta = await json(await api.get('/api/edit?node=catalog/filters&worktree=search-work'));
      expect(delta.body).toMatchObject({ worktree: wt, state: 'added' });
      // A folder node the worktree adds is found at its index.md, where the overlay saw it.
      mkdirSync(join(wt, 'specs/catalog/registry'));
      writeFileSync(join(wt, 'specs/catalog/registry/index.md'), '# Registry\n\nGift registries.\n');
      // (Polled: the server sees the new file through its watcher of the worktree.)
      const folder = async () => (await json(await api.get('/api/edit?node=catalog/registry&worktree=search-work'))).body;
      await expect.poll(async () => (await folder()).path, { timeout: 10_000 }).toBe('specs/catalog/registry/index.md');
      expect(await folder()).toMatchObject({ worktree: wt, state: 'added', additions: 3 });
    } finally {
      git(dir, 'worktree', 'remove', '--force', wt);
    }
  });
});

describe('settings and catalogs', () => {
  it('GET /api/settings resolves the layout and never echoes what trellis.local.json holds', async () => {
    writeFileSync(join(dir, 'trellis.local.json'), JSON.stringify({ githubToken: 'SECRET-123', trunk: 'main' }));
    try {
      const r = await api.get('/api/settings');
      const text = await r.text();
      expect(text).not.toContain('SECRET-123');
      expect(JSON.parse(text)).toEqual({
        root: dir,
        specRoot: 'specs',
        trunk: 'main',
        harness: 'auto',
        pluginRoot: '.trellis/plugins',
        forges: [],
        sources: { committed: true, local: true },
      });
    } finally {
      unlinkSync(join(dir, 'trellis.local.json'));
    }
  });

  it('plugins, slash commands and guidance carry source references and hashes, never the prose', async () => {
    const plugins = (await json(await api.get('/api/plugins'))).body;
    expect(plugins.map((p: { name: string }) => p.name)).toEqual(['tea-kit']);
    const commands = (await json(await api.get('/api/slash-commands'))).body;
    expect(commands.map((c: { name: string; origin: string }) => [c.name, c.origin])).toEqual([
      ['price-check', 'plugin'],
      ['spec-review', 'agent'],
    ]);
    const guidance = (await json(await api.get('/api/guidance'))).body;
    for (const entry of guidance) {
      expect(Object.keys(entry).sort()).toEqual(['id', 'kind', 'source', 'title']);
      expect(entry.source.hash).toBe(createHash('sha256').update(readFileSync(join(dir, entry.source.path))).digest('hex'));
    }
    expect(guidance.map((g: { id: string }) => g.id)).toContain('guide:tea-kit/writing-nodes');
    expect(JSON.parse(await ok(dir, ['guidance', '--json']))).toEqual(guidance);
  });

  it('GET /api/resources reports the host inventory', async () => {
    const { body } = await json(await api.get('/api/resources'));
    expect(body.cpus).toBeGreaterThan(0);
    expect(body.memory.totalBytes).toBeGreaterThan(body.memory.freeBytes);
    expect(body.load).toHaveLength(3);
    expect(body.sessions).toEqual({ running: 0, queued: 0, budget: body.cpus, minFreeMb: 256, pool: { dir: expect.stringMatching(/\/\.pool$/), size: 2, ready: 0, behind: 0, other: 0, bytes: 0 } });
  });
});

describe('issue routes', () => {
  it('lists the merged issues with the writable stores; eval remarks are nowhere', async () => {
    const { body } = await json(await api.get('/api/issues'));
    expect(body.stores).toEqual(['local']);
    expect(body.issues.map((i: { id: string }) => i.id)).toEqual(['cancelpacked', 'currencyq001', 'pwreset30min', 'srch4nothing', 'paydoublechg']);
    expect((await api.get('/api/issues/evalcheckout')).status).toBe(404);
    expect((await api.get('/api/issues/nosuch')).status).toBe(404);
    expect((await json(await api.get('/api/issues/srch4nothing'))).body).toEqual(JSON.parse(await ok(dir, ['issue', 'show', 'srch4nothing', '--json'])));
  });

  it('open, reply (evidence deduped), remark, resolve, close — then refusals', async () => {
    const opened = await json(await api.get('/api/issues', post({ concern: 'Tea photos are blurry', body: 'See [[catalog/browse]].' })));
    expect(opened.status).toBe(201);
    // No `by`: the project's git user.name (the CLI's rule, one function), never a placeholder such as "human".
    expect(opened.body).toMatchObject({ by: 'human', status: 'open', nodes: ['catalog/browse'], store: 'local', labels: [] });
    expect(await (await api.get('/api/author')).json()).toEqual({ by: 'human' });
    expect(await (await api.get('/api/author', { headers: { 'Trellis-Session': 's-7f2c' } })).json()).toEqual({ by: 's-7f2c' });
    const id = opened.body.id;

    // The page asks before it uploads a reply's files: a reply that would be refused is refused here,
    // and the check itself writes nothing.
    const tip = git(dir, 'rev-parse', `refs/trellis/issues/${id}`);
    expect(await json(await api.get(`/api/issues/${id}/reply/check`, post({ body: 'photo attached', by: 's-1' })))).toMatchObject({ status: 200, body: { accepted: true } });
    expect(await json(await api.get('/api/issues/nosuch/reply/check', post({ body: 'x' })))).toMatchObject({ status: 404, body: { error: { code: 'THREAD_NOT_FOUND' } } });
    expect(await json(await api.get('/api/issues/evalcheckout/reply/check', post({ body: 'x' })))).toMatchObject({ status: 404, body: { error: { code: 'THREAD_NOT_FOUND' } } });
    expect(await json(await api.get(`/api/issues/${id}/reply/check`, post({ body: '  ' })))).toMatchObject({ status: 400, body: { error: { code: 'INVALID_INPUT' } } });
    expect(await json(await api.get(`/api/issues/${id}/reply/check`, post({ body: 'x', evidence: [] })))).toMatchObject({ status: 400, body: { error: { code: 'INVALID_INPUT' } } });
    expect(git(dir, 'rev-parse', `refs/trellis/issues/${id}`)).toBe(tip);

    const ev = await json(await api.get('/api/evidence', { method: 'POST', body: new Uint8Array([1, 2, 3]) }));
    expect(ev.status).toBe(201);
    const reply = await json(await api.get(`/api/issues/${id}/reply`, post({ body: 'photo attached', evidence: [ev.body.hash, ev.body.hash], by: 's-1' })));
    expect(reply.body.reply).toBe(1);
    expect(reply.body.issue.evidence).toEqual([ev.body.hash]);
    const remark = await json(await api.get(`/api/issues/${id}/remark`, post({ body: 'spec silent on image size', reading: 'catalog/browse@HEAD' })));
    expect(remark.body.reply).toBe(2);
    const resolved = await json(await api.get(`/api/issues/${id}/replies/2/resolve`, post({})));
    expect(resolved.body).toMatchObject({ changed: true, issue: { replies: [{}, { resolved: true }] } });
    expect((await json(await api.get(`/api/issues/${id}/replies/1/resolve`, { method: 'POST' }))).body.error.code).toBe('NOT_A_REMARK');

    const closed = await json(await api.get(`/api/issues/${id}/close`, { method: 'POST' }));
    expect(closed.body.status).toBe('landed');
    expect(await json(await api.get(`/api/issues/${id}/close`, { method: 'POST' }))).toMatchObject({ status: 409, body: { error: { code: 'THREAD_NOT_OPEN' } } });
    expect(git(dir, 'log', '--format=%an %s', `refs/trellis/issues/${id}`).split('\n')[0]).toBe('human close: landed');
  });

  it('promote says clearly that no forge is configured; unknown ids 404 first', async () => {
    expect(await json(await api.get('/api/issues/srch4nothing/promote', { method: 'POST' }))).toMatchObject({ status: 409, body: { error: { code: 'NO_FORGE', message: expect.stringContaining('"forges" in trellis.json') } } });
    expect((await api.get('/api/issues/nosuch/promote', { method: 'POST' })).status).toBe(404);
    expect((await trellis(dir, ['issue', 'promote', 'srch4nothing'])).stderr).toMatch(/no forge is configured/);
  });

  it('refuses bad bodies with 400s that say why, and oversized bodies with 413', async () => {
    expect(await json(await api.get('/api/issues', post('{"concern":')))).toMatchObject({ status: 400, body: { error: { code: 'INVALID_INPUT', message: expect.stringContaining('not valid JSON') } } });
    expect((await json(await api.get('/api/issues', post({ concern: 'x', nodez: [] })))).status).toBe(400);
    // One rule for an unknown node, as the CLI and the page: refused with the nearest names, nothing written.
    const before = (await json(await api.get('/api/issues'))).body.issues.length;
    expect(await json(await api.get('/api/issues', post({ concern: 'x', nodes: ['checkout/paymnet'] })))).toEqual({
      status: 404,
      body: { error: { code: 'NODE_NOT_FOUND', message: "no spec node 'checkout/paymnet' in specs/; did you mean 'checkout/payment'? ('trellis board' lists the nodes; name a new node once its file exists)" }, unknown: ['checkout/paymnet'] },
    });
    expect((await json(await api.get('/api/issues'))).body.issues.length).toBe(before);
    expect((await json(await api.get('/api/issues', post({ concern: 7 })))).status).toBe(400);
    expect((await json(await api.get('/api/issues', post({ concern: '  ' })))).body.error.code).toBe('INVALID_INPUT');
    expect((await json(await api.get('/api/issues', post({ concern: 'x', store: 'gitlab.com' })))).body.error.code).toBe('UNKNOWN_STORE');
    expect((await api.get('/api/issues', post({ concern: 'x'.repeat(2 << 20) }))).status).toBe(413);
  });
});

describe('evidence routes', () => {
  it('puts bytes and reads them back whole, by range, by suffix; 416 and 404 where due', async () => {
    const bytes = Buffer.from('0123456789');
    const put = await json(await api.get('/api/evidence', { method: 'POST', body: bytes }));
    expect(put).toEqual({ status: 201, body: { hash: createHash('sha256').update(bytes).digest('hex'), size: 10 } });
    const url = `/api/evidence/${put.body.hash}`;
    const whole = await api.get(url);
    expect([whole.status, await whole.text(), whole.headers.get('etag')]).toEqual([200, '0123456789', `"${put.body.hash}"`]);
    const part = await api.get(url, { headers: { Range: 'bytes=2-5' } });
    expect([part.status, await part.text(), part.headers.get('content-range')]).toEqual([206, '2345', 'bytes 2-5/10']);
    const suffix = await api.get(url, { headers: { Range: 'bytes=-3' } });
    expect([suffix.status, await suffix.text()]).toEqual([206, '789']);
    const open = await api.get(url, { headers: { Range: 'bytes=8-' } });
    expect(await open.text()).toBe('89');
    const beyond = await api.get(url, { headers: { Range: 'bytes=10-12' } });
    expect([beyond.status, beyond.headers.get('content-range')]).toEqual([416, 'bytes */10']);
    expect((await api.get(`/api/evidence/${'0'.repeat(64)}`)).status).toBe(404);
    expect((await api.get('/api/evidence/not-a-hash')).status).toBe(404);
    expect((await json(await api.get('/api/evidence', { method: 'POST' }))).status).toBe(400);
  });

  it('keeps a file’s name and type: shown back in Content-Disposition and Content-Type; a type a browser would run is served as a download', async () => {
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.from('named screenshot')]);
    const put = await json(await api.get('/api/evidence', { method: 'POST', body: png, headers: { 'Content-Type': 'image/png', 'X-Filename': encodeURIComponent('Écran 1 "final".png') } }));
    expect(put).toEqual({ status: 201, body: { hash: createHash('sha256').update(png).digest('hex'), size: png.length, name: 'Écran 1 _final_.png', type: 'image/png' } });
    const got = await api.get(`/api/evidence/${put.body.hash}`);
    expect(got.headers.get('content-type')).toBe('image/png');
    expect(got.headers.get('content-disposition')).toBe(`inline; filename="_cran 1 _final_.png"; filename*=UTF-8''%C3%89cran%201%20_final_.png`);
    expect(got.headers.get('x-evidence-type')).toBe('image/png');
    // HTML is kept as HTML, but never served as a page of this origin.
    const page = Buffer.from('<script>alert(1)</script>');
    const html = await json(await api.get('/api/evidence', { method: 'POST', body: page, headers: { 'Content-Type': 'text/html', 'X-Filename': 'report.html' } }));
    const served = await api.get(`/api/evidence/${html.body.hash}`);
    expect([served.headers.get('content-type'), served.headers.get('content-disposition'), served.headers.get('x-evidence-type')]).toEqual([
      'application/octet-stream',
      `attachment; filename="report.html"; filename*=UTF-8''report.html`,
      'text/html',
    ]);
    // Bytes stored without a name stay as they were served: no name is made up.
    const bare = await api.get(`/api/evidence/${createHash('sha256').update(Buffer.from('0123456789')).digest('hex')}`);
    expect([bare.headers.get('content-type'), bare.headers.get('content-disposition')]).toEqual(['application/octet-stream', null]);
    expect((await json(await api.get('/api/evidence', { method: 'POST', body: page, headers: { 'X-Filename': '%E0%A4%A' } }))).status).toBe(400);
  });
});
