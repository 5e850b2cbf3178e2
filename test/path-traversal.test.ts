import { createHash } from 'node:crypto';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupRepos, trellis } from './helpers/repo.js';
import { demoRepo, post, serveDir } from './helpers/server.js';

/*
 * Every route and verb that takes an id or a path, fed hostile ids: all refused with a 4xx JSON error
 * (or a non-zero exit), and never a byte of the file outside.
 */

const SECRET = 'SECRET-OUTSIDE-BYTES-7f3a';
let dir: string;
let outsideHash: string;
let api: Awaited<ReturnType<typeof serveDir>>;

beforeAll(async () => {
  dir = await demoRepo();
  const outside = join(dir, '..', 'OUTSIDE.md');
  const outsideJson = join(dir, '..', 'OUTSIDE.json');
  const bytes = `# ${SECRET}\n\n${SECRET}\n`;
  writeFileSync(outside, bytes);
  writeFileSync(outsideJson, JSON.stringify({ name: SECRET, description: SECRET, surfaces: ['command', 'guide'] }));
  outsideHash = createHash('sha256').update(bytes).digest('hex');
  // Symlinks pointing out, at every place a file or folder is read from.
  symlinkSync(outside, join(dir, 'specs', 'leak.md'));
  symlinkSync(join(dir, '..'), join(dir, 'specs', 'leakdir'));
  symlinkSync(outside, join(dir, 'AGENTS.md'));
  mkdirSync(join(dir, '.claude', 'commands'), { recursive: true });
  symlinkSync(outside, join(dir, '.claude', 'commands', 'leak.md'));
  const plugin = join(dir, '.trellis', 'plugins', 'evil');
  mkdirSync(join(plugin, 'commands'), { recursive: true });
  symlinkSync(outside, join(plugin, 'commands', 'link.md'));
  writeFileSync(
    join(plugin, 'plugin.json'),
    JSON.stringify({
      name: 'evil',
      surfaces: ['command', 'guide'],
      commands: [
        { name: 'dotdot', file: '../../../../OUTSIDE.md' },
        { name: 'abs', file: outside },
        { name: 'link', file: 'commands/link.md' },
        { name: 'nul', file: 'commands/x\u0000.md' },
      ],
      guides: [{ id: 'g', file: '../../../../OUTSIDE.md' }],
    }),
  );
  mkdirSync(join(dir, '.trellis', 'plugins', 'evil2'), { recursive: true });
  symlinkSync(outsideJson, join(dir, '.trellis', 'plugins', 'evil2', 'plugin.json'));
  api = await serveDir(dir);
}, 60_000);

afterAll(async () => {
  await api?.close();
  cleanupRepos();
});

/** Hostile ids, as sent on the wire (already URL-encoded where a client would encode them). */
const HOSTILE: readonly [string, string][] = [
  ['dot-dot', '../../OUTSIDE'],
  ['encoded slash', '..%2F..%2FOUTSIDE'],
  ['encoded dots', '%2e%2e%2f%2e%2e%2fOUTSIDE'],
  ['double encoded', '%252e%252e%252fOUTSIDE'],
  ['absolute', encodeURIComponent('/etc/passwd')],
  ['absolute outside', encodeURIComponent('/tmp/../OUTSIDE')],
  ['NUL byte', 'catalog%00/../../OUTSIDE'],
  ['backslash', '..%5C..%5COUTSIDE'],
  ['very long', 'a'.repeat(5000)],
  ['symlink node', 'leak'],
  ['through symlinked folder', 'leakdir/OUTSIDE'],
];

const ROUTES: readonly [string, (id: string) => [string, RequestInit?]][] = [
  ['GET /api/edit?node=', (id) => [`/api/edit?node=${id}`]],
  ['GET /api/edit?worktree=', (id) => [`/api/edit?node=catalog&worktree=${id}`]],
  ['GET /api/specs/:id/content', (id) => [`/api/specs/${id}/content`]],
  ['GET /api/specs/:id/history', (id) => [`/api/specs/${id}/history`]],
  ['GET /api/specs/:id/diff/:hash', (id) => [`/api/specs/${id}/diff/abc123`]],
  ['GET /api/specs/catalog/diff/:hash', (id) => [`/api/specs/catalog/diff/${id}`]],
  ['GET /api/issues/:id', (id) => [`/api/issues/${id}`]],
  ['POST /api/issues/:id/reply', (id) => [`/api/issues/${id}/reply`, post({ body: 'x' })]],
  ['POST /api/issues/:id/reply/check', (id) => [`/api/issues/${id}/reply/check`, post({ body: 'x' })]],
  ['POST /api/issues/:id/remark', (id) => [`/api/issues/${id}/remark`, post({ body: 'x', reading: 'r' })]],
  ['POST /api/issues/:id/close', (id) => [`/api/issues/${id}/close`, post({})]],
  ['POST /api/issues/:id/promote', (id) => [`/api/issues/${id}/promote`, post({})]],
  ['POST /api/issues/:id/replies/1/resolve', (id) => [`/api/issues/${id}/replies/1/resolve`, post({})]],
  ['POST /api/issues (nodes)', (id) => ['/api/issues', post({ concern: 'c', nodes: [decoded(id)] })]],
  ['GET /api/evidence/:hash', (id) => [`/api/evidence/${id}`]],
];

function decoded(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Ids that are well-formed node ids: binding an issue to them reads no file, so opening one is fine. */
const PLAIN_NODE_IDS = new Set(['leak', 'leakdir/OUTSIDE']);

describe('every route that takes an id refuses hostile ids without serving bytes', () => {
  for (const [route, build] of ROUTES) {
    const rows = route.includes('(nodes)') ? HOSTILE.filter(([, id]) => !PLAIN_NODE_IDS.has(id)) : HOSTILE;
    it.each(rows)(`${route} with %s`, async (_name, id) => {
      const [path, init] = build(id);
      const res = await api.get(path, init);
      const text = await res.text();
      expect([400, 404], `${path} answered ${res.status}: ${text.slice(0, 200)}`).toContain(res.status);
      expect(JSON.parse(text).error.code).toMatch(/^[A-Z_]+$/);
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(outsideHash);
    });
  }
});

describe('catalogs never follow a link out of the project', () => {
  it.each(['/api/guidance', '/api/plugins', '/api/slash-commands', '/api/specs', '/api/specs/lite', '/api/graph'])('%s', async (path) => {
    const res = await api.get(path);
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(outsideHash);
    expect(text).not.toContain('leak');
  });

  it('the plugin keeps its entries that stay inside and drops the rest', async () => {
    const plugins = (await (await api.get('/api/plugins')).json()) as { name: string; commands: unknown[] }[];
    const evil = plugins.find((p) => p.name === 'evil');
    expect(evil).toBeDefined();
    expect(evil!.commands).toEqual([]);
    expect(plugins.some((p) => p.name === 'evil2' || p.name === SECRET)).toBe(false);
  });
});

describe('every CLI verb that takes an id refuses hostile ids without printing bytes', () => {
  const ids = ['../../OUTSIDE', '/etc/passwd', 'a/../../OUTSIDE', 'x\u0001y', 'a'.repeat(5000), 'leak'];
  const verbs: readonly [string, (id: string) => string[]][] = [
    ['issue show', (id) => ['issue', 'show', id]],
    ['issue reply', (id) => ['issue', 'reply', id, '--body', 'x']],
    ['issue close', (id) => ['issue', 'close', id]],
    ['issue resolve', (id) => ['issue', 'resolve', id, '1']],
    ['issue retract', (id) => ['issue', 'retract', id, '1']],
    ['issue open --node', (id) => ['issue', 'open', 'c', '--node', id]],
    ['evidence get', (id) => ['evidence', 'get', id]],
  ];
  for (const [verb, args] of verbs) {
    it(`${verb}`, async () => {
      for (const id of ids) {
        if (verb === 'issue open --node' && PLAIN_NODE_IDS.has(id)) continue;
        const r = await trellis(dir, args(id));
        expect(r.code, `${verb} ${id.slice(0, 40)}: ${r.stderr}`).not.toBe(0);
        expect(r.stdout + r.stderr).not.toContain(SECRET);
        expect(r.stderr).toMatch(/^trellis: /);
      }
    }, 60_000);
  }
});
