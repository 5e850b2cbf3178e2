import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveProject } from '../src/http/serve.js';
import { openProject } from '../src/store/compose/open-project.js';
import { judgeForges } from '../src/store/forge/trust.js';
import type { ForgeConfig } from '../src/store/project/config.js';
import { trustForges } from './helpers/forge-trust.js';
import { cleanupRepos, tempDir, tempRepo, trellis } from './helpers/repo.js';

/*
 * Issue 46, deliverable 4: a token goes only to its forge. The probe committed a trellis.json whose forge
 * entry pointed at a plain-http listener and named another environment variable: `trellis serve` sent
 * `Authorization: Bearer <that variable>` there within 6 s. Here the listener is a real socket that counts
 * its connections; before the fix `issue ls`, doctor and the server each reached it with the secret.
 */

const SECRET = 'the-person-s-secret-value';
let listener: http.Server;
let url: string;
let connections = 0;
const authorizations: string[] = [];

beforeAll(async () => {
  listener = http.createServer((req, res) => {
    authorizations.push(String(req.headers.authorization ?? ''));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('[]');
  });
  listener.on('connection', () => connections++);
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(listener.address() as { port: number }).port}`;
});
afterAll(async () => {
  listener.closeAllConnections();
  await new Promise((r) => listener.close(r));
  cleanupRepos();
});

/** A clone whose committed trellis.json sends GITHUB's forge to the listener with another variable. */
function hostileClone(): string {
  const dir = tempRepo();
  writeFileSync(join(dir, 'trellis.json'), JSON.stringify({ forges: [{ driver: 'github', host: 'github.com', repo: 'acme/shop', apiUrl: url, tokenEnv: 'SOME_SECRET' }] }));
  return dir;
}

const env = { SOME_SECRET: SECRET, GITHUB_TOKEN: '' };
const ENTRY = 'trellis.json forges[0] (github.com)';

describe('a committed trellis.json cannot choose where a token is sent', () => {
  it('issue ls: one stderr line naming the entry and why; no connection reaches the listener', async () => {
    const before = connections;
    const r = await trellis(hostileClone(), ['issue', 'ls'], { env });
    expect(r.code).toBe(0);
    expect(connections).toBe(before);
    const lines = r.stderr.split('\n').filter((l) => l.includes(ENTRY));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/is not used, no request is made: "apiUrl" http:\/\/127\.0\.0\.1:\d+ is not https/);
    expect(connections).toBe(before);
  });

  it('doctor: the entry, why, and the repair in the person’s own config; no connection', async () => {
    const before = connections;
    const r = await trellis(hostileClone(), ['doctor'], { env });
    expect(connections).toBe(before);
    expect(r.stdout + r.stderr).toContain(`forge ${ENTRY} is not used`);
    expect(r.stdout + r.stderr).toContain('"trustedForges"');
    expect(connections).toBe(before);
  });

  it('trellis serve: its refresh makes no request; GET /api/issues (the page) carries the note', async () => {
    const before = connections;
    process.env.SOME_SECRET = SECRET;
    const p = openProject(hostileClone());
    const served = await serveProject(p, { port: 0 });
    try {
      await p.forges.refresh();
      expect(connections).toBe(before);
      const body = (await (await fetch(new URL('/api/issues', served.url))).json()) as { notes?: string[]; stores: string[] };
      expect(body.stores).toEqual(['local']);
      expect(body.notes).toEqual([expect.stringContaining(`forge ${ENTRY} is not used, no request is made: "apiUrl" ${url} is not https`)]);
      expect(connections).toBe(before);
    } finally {
      await served.close();
      delete process.env.SOME_SECRET;
    }
  });

  it('allowed in the person’s trellis.local.json, the same entry is used (the counter sees it): the control', async () => {
    const dir = hostileClone();
    trustForges(dir, [{ host: 'github.com', apiUrl: url, tokenEnv: 'SOME_SECRET' }]);
    const before = connections;
    const r = await trellis(dir, ['issue', 'ls'], { env });
    expect(r.stderr).not.toContain(ENTRY);
    expect(connections).toBeGreaterThan(before);
    expect(authorizations.at(-1)).toBe(`Bearer ${SECRET}`);
  });

  it('allowed in $TRELLIS_HOME/hub.json too', async () => {
    const dir = hostileClone();
    const home = tempDir();
    writeFileSync(join(home, 'hub.json'), JSON.stringify({ trustedForges: [{ host: 'github.com', apiUrl: url, tokenEnv: 'SOME_SECRET' }] }));
    const before = connections;
    const r = await trellis(dir, ['issue', 'ls'], { env: { ...env, TRELLIS_HOME: home } });
    expect(r.stderr).not.toContain(ENTRY);
    expect(connections).toBeGreaterThan(before);
  });
});

describe('the rule, entry by entry', () => {
  const gh = (more: Partial<ForgeConfig> = {}): ForgeConfig => ({ driver: 'github', host: 'github.com', repo: 'acme/shop', ...more });
  const rows: { name: string; f: ForgeConfig; trust?: { host: string; apiUrl?: string; tokenEnv?: string }[]; from?: 'local'; why: RegExp | null }[] = [
    { name: 'defaults (https://api.github.com, GITHUB_TOKEN)', f: gh(), why: null },
    { name: 'GitHub Enterprise on its own host', f: { driver: 'github', host: 'ghe.example.com', repo: 'a/b', apiUrl: 'https://ghe.example.com/api/v3' }, why: null },
    { name: 'GitLab self-managed, default API', f: { driver: 'gitlab', host: 'gitlab.example.com', repo: 'a/b' }, why: null },
    { name: 'plain http', f: gh({ apiUrl: 'http://api.github.com' }), why: /is not https/ },
    { name: 'https on another host', f: gh({ apiUrl: 'https://collector.example' }), why: /is not on github\.com/ },
    { name: 'a look-alike host', f: gh({ apiUrl: 'https://api.github.com.evil.example' }), why: /is not on github\.com/ },
    { name: 'another variable', f: gh({ tokenEnv: 'AWS_SECRET_ACCESS_KEY' }), why: /"tokenEnv" names AWS_SECRET_ACCESS_KEY, not the github driver's GITHUB_TOKEN/ },
    { name: 'another variable, allowed for another host only', f: gh({ tokenEnv: 'X' }), trust: [{ host: 'gitlab.com', tokenEnv: 'X' }], why: /"tokenEnv" names X/ },
    { name: 'another variable, allowed by the person', f: gh({ tokenEnv: 'X' }), trust: [{ host: 'github.com', tokenEnv: 'X' }], why: null },
    { name: 'a loopback stand-in, allowed by the person', f: gh({ apiUrl: 'http://127.0.0.1:9/' }), trust: [{ host: 'github.com', apiUrl: 'http://127.0.0.1:9' }], why: null },
    { name: 'forges written in trellis.local.json: the person’s own', f: gh({ apiUrl: 'http://127.0.0.1:9', tokenEnv: 'X' }), from: 'local', why: null },
  ];
  it.each(rows)('$name', ({ f, trust, from, why }) => {
    const { allowed, refused } = judgeForges({ forges: [f], forgesFrom: from ?? 'committed', trustedForges: trust ?? [] }, []);
    if (why === null) expect([allowed, refused]).toEqual([[f], []]);
    else {
      expect(allowed).toEqual([]);
      expect(refused).toEqual([expect.objectContaining({ entry: `trellis.json forges[0] (${f.host})`, why: expect.stringMatching(why) })]);
    }
  });
});
