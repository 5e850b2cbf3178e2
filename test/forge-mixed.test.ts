import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ForgejoForge } from './forge/forgejo-forge.js';
import { GitHubForge } from './forge/github-forge.js';
import { GitLabForge } from './forge/gitlab-forge.js';
import { cleanupRepos, ok, trellis } from './helpers/repo.js';
import { demoRepo } from './helpers/server.js';
import { trustForges } from './helpers/forge-trust.js';

/* One project with local, GitHub, GitLab and Forgejo issues at once, through the CLI. */

let gh: GitHubForge;
let gl: GitLabForge;
let fj: ForgejoForge;
let dir: string;
const tokens = { GITHUB_TOKEN: 'gh-token', GITLAB_TOKEN: 'gl-token', FORGEJO_TOKEN: 'fj-token' };

beforeAll(async () => {
  [gh, gl, fj] = [await new GitHubForge({ token: tokens.GITHUB_TOKEN }).start(), await new GitLabForge({ token: tokens.GITLAB_TOKEN }).start(), await new ForgejoForge({ token: tokens.FORGEJO_TOKEN }).start()];
  // Each created between the demo's local threads (Jan 22, 29, 30, 31), so the merged list must interleave them.
  gl.seed({ title: 'Parcel tracking link 404s', body: 'Spec: orders', labels: ['bug'], at: '2026-01-25T10:00:00Z' });
  fj.seed({ title: 'Translate the catalog', body: 'Into Dutch.', labels: ['enhancement'], at: '2026-01-29T12:00:00Z' });
  fj.seedComment(1, 'I can help.', 'bob');
  gh.seed({ title: 'Checkout button overlaps the footer', at: '2026-01-30T12:00:00Z' });
  gl.seed({ title: 'Gift cards', at: '2026-02-02T00:00:00Z' });
  gl.seedComment(2, 'Seasonal demand.', 'alice');
  gl.seedComment(2, 'changed the description', 'alice', true);
  dir = await demoRepo();
  writeFileSync(
    join(dir, 'trellis.json'),
    JSON.stringify({
      specRoot: 'specs',
      forges: [
        { driver: 'github', host: 'github.com', repo: 'acme/shop', apiUrl: gh.apiUrl },
        { driver: 'gitlab', host: 'gitlab.com', project: 'acme/shop', apiUrl: gl.apiUrl },
        { driver: 'forgejo', host: 'codeberg.org', repo: 'acme/shop', apiUrl: fj.apiUrl },
      ],
    }),
  );
  trustForges(dir, [{ host: 'github.com', apiUrl: gh.apiUrl }, { host: 'gitlab.com', apiUrl: gl.apiUrl }, { host: 'codeberg.org', apiUrl: fj.apiUrl }]);
});
afterAll(async () => {
  for (const f of [gh, gl, fj]) await f.stop().catch(() => {});
  cleanupRepos();
});

const ids = (json: string) => (JSON.parse(json) as { id: string }[]).map((i) => i.id);

describe('local, GitHub, GitLab and Forgejo issues in one project', () => {
  it('the merged list interleaves every store by creation time, each in the one Issue shape', async () => {
    const all = JSON.parse(await ok(dir, ['issue', 'ls', '--all', '--json'], { env: tokens }));
    expect(all.map((i: { id: string }) => i.id)).toEqual(['cancelpacked', 'gitlab.com#2', 'currencyq001', 'github.com#1', 'pwreset30min', 'codeberg.org#1', 'srch4nothing', 'gitlab.com#1', 'paydoublechg']);
    const by = (id: string) => all.find((i: { id: string }) => i.id === id);
    expect(by('gitlab.com#1')).toMatchObject({ store: 'gitlab.com', status: 'open', nodes: ['orders'], body: '', labels: [{ name: 'bug', color: 'd73a4a', textColor: 'FFFFFF' }], url: 'https://gitlab.com/acme/shop/-/issues/1' });
    expect(by('gitlab.com#2').replies).toEqual([{ by: 'alice', at: expect.any(String), body: 'Seasonal demand.' }]);
    expect(by('codeberg.org#1')).toMatchObject({ created: '2026-01-29T12:00:00.000Z', labels: [{ name: 'enhancement', color: 'a2eeef' }], replies: [{ by: 'bob', body: 'I can help.' }] });
    expect(ids(await ok(dir, ['issue', 'ls', '--json', '--node', 'orders'], { env: tokens }))).toContain('gitlab.com#1');
  });

  it('the CLI’s next run pulls GitLab and Forgejo only for what changed since the last run', async () => {
    await ok(dir, ['issue', 'ls', '--json'], { env: tokens });
    const [glFrom, fjFrom] = [gl.log.length, fj.log.length];
    gl.seedComment(1, 'Still broken.', 'carol');
    const listed = JSON.parse(await ok(dir, ['issue', 'ls', '--json'], { env: tokens }));
    const shown = listed.find((i: { id: string }) => i.id === 'gitlab.com#1');
    expect(shown.replies.map((r: { body: string }) => r.body)).toEqual(['Still broken.']);
    const asked = (f: GitLabForge | ForgejoForge, from: number) => f.log.slice(from).map((r) => r.path.replace(/\?.*/, '') + (/updated_after=|since=/.test(r.path) ? ' (since)' : ''));
    expect(asked(gl, glFrom)).toEqual(['/api/v4/projects/acme%2Fshop/issues (since)', '/api/v4/projects/acme%2Fshop/issues/1/notes']);
    expect(asked(fj, fjFrom)).toEqual(['/api/v1/repos/acme/shop/issues (since)', '/api/v1/repos/acme/shop/issues/comments (since)']);
  });

  it('writes go to the forge an id names: open --store, reply and close on GitLab and Forgejo', async () => {
    const opened = JSON.parse(await ok(dir, ['issue', 'open', 'Dented tins', '--store', 'gitlab.com', '--node', 'ops/inventory', '--json'], { env: tokens }));
    expect(opened).toMatchObject({ id: 'gitlab.com#3', store: 'gitlab.com', nodes: ['ops/inventory'], by: 'trellis-bot' });
    expect(gl.issues[2]!.description).toBe('Spec: ops/inventory');
    expect(await ok(dir, ['issue', 'reply', 'codeberg.org#1', '--body', 'Thanks!'], { env: tokens })).toBe('2\n');
    expect(fj.comments.at(-1)).toMatchObject({ number: 1, body: 'Thanks!' });
    expect(await ok(dir, ['issue', 'close', 'gitlab.com#3'], { env: tokens })).toBe('gitlab.com#3 closed\n');
    expect(gl.issues[2]!.state).toBe('closed');
  });

  it('promotes a local thread to Forgejo: the forge issue first, then the thread lands with its permalink', async () => {
    const promoted = JSON.parse(await ok(dir, ['issue', 'promote', 'srch4nothing', '--store', 'codeberg.org', '--json'], { env: { ...tokens, TRELLIS_SESSION: 's-9' } }));
    const created = fj.issues.at(-1)!;
    expect(created.body).toMatch(/Spec: .+[\s\S]*Promoted from local thread srch4nothing by s-9 with trellis\./);
    expect(promoted).toMatchObject({ id: 'srch4nothing', status: 'landed', url: fj.webUrl(created.number) });
    expect(promoted.replies.at(-1).body).toBe(`Promoted to codeberg.org#${created.number}: ${fj.webUrl(created.number)}`);
  });

  it('one forge down: the list is the others with one stderr line naming it', async () => {
    const everything = ids(await ok(dir, ['issue', 'ls', '--all', '--json'], { env: tokens }));
    expect(everything.filter((id) => id.startsWith('gitlab.com#'))).toHaveLength(3);
    await gl.goDown();
    try {
      const r = await trellis(dir, ['issue', 'ls', '--all', '--json'], { env: tokens });
      expect(r.code).toBe(0);
      expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^trellis: gitlab\.com is unreachable /)]);
      expect(ids(r.stdout)).toEqual(everything.filter((id) => !id.startsWith('gitlab.com#')));
    } finally {
      await gl.comeBack();
    }
  });

  it('doctor checks each forge and names the repair: all well, a refused token, a forge down', async () => {
    const findings = (r: { stdout: string }) => (JSON.parse(r.stdout) as { level: string; what: string; repair?: string }[]).filter((f) => f.what.startsWith('forge '));
    const well = await trellis(dir, ['doctor', '--json'], { env: tokens });
    expect(findings(well)).toEqual([
      { level: 'ok', what: 'forge github.com accepts the token in GITHUB_TOKEN' },
      { level: 'ok', what: 'forge github.com: "repo": "acme/shop" found' },
      { level: 'ok', what: 'forge gitlab.com accepts the token in GITLAB_TOKEN' },
      { level: 'ok', what: 'forge gitlab.com: "project": "acme/shop" found' },
      { level: 'ok', what: 'forge codeberg.org accepts the token in FORGEJO_TOKEN' },
      { level: 'ok', what: 'forge codeberg.org: "repo": "acme/shop" found' },
    ]);
    await fj.goDown();
    try {
      const bad = await trellis(dir, ['doctor', '--json'], { env: { ...tokens, GITLAB_TOKEN: 'expired' } });
      expect(bad.code).toBe(1);
      const f = findings(bad);
      expect(f.find((x) => x.what.includes('gitlab.com'))).toEqual({ level: 'error', what: 'forge gitlab.com refused the token in GITLAB_TOKEN (401)', repair: 'set GITLAB_TOKEN to a valid token with the api scope (read_api to read only)' });
      expect(f.find((x) => x.what.includes('codeberg.org'))).toEqual({ level: 'error', what: `forge codeberg.org is unreachable at ${fj.apiUrl}`, repair: expect.stringContaining('check "apiUrl" for codeberg.org in trellis.json') });
      expect(f.filter((x) => x.what.includes('github.com')).map((x) => x.level)).toEqual(['ok', 'ok']);
    } finally {
      await fj.comeBack();
    }
  });
});
