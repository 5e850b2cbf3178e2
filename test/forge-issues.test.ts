import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIssue, replyToIssue } from '../src/store/issues/verbs.js';
import { openProject, type SessionRegistry } from '../src/store/compose/open-project.js';
import { GitHubForge } from './forge/github-forge.js';
import { cleanupRepos, git, ok, tempRepo, trellis } from './helpers/repo.js';
import { demoRepo, post, serveDir } from './helpers/server.js';
import { trustForges } from './helpers/forge-trust.js';

let forge: GitHubForge;
let dir: string;

const configure = (repoDir: string, f: GitHubForge) => {
  writeFileSync(join(repoDir, 'trellis.json'), JSON.stringify({ specRoot: 'specs', forges: [{ driver: 'github', host: 'github.com', repo: 'acme/shop', apiUrl: f.apiUrl }] }));
  trustForges(repoDir, [{ host: 'github.com', apiUrl: f.apiUrl }]);
};

beforeAll(async () => {
  forge = await new GitHubForge().start();
  // Created between the demo's local threads, so a merged list must interleave them.
  forge.seed({ title: 'Checkout button overlaps the footer', body: 'On small screens.\n\nSpec: checkout', labels: ['bug'], at: '2026-01-25T10:00:00Z' });
  forge.seed({ title: 'Add oolong to the catalog', body: 'Customers ask for it.', at: '2026-02-01T10:00:00Z' });
  forge.seedComment(1, 'Seen on iPhone SE too.', 'alice');
  forge.seed({ title: 'Fix the overlap', body: 'Fixes #2\n\nSpec: catalog/browse', pullRequest: true, at: '2026-02-01T11:00:00Z' });
  dir = await demoRepo();
  configure(dir, forge);
});
afterAll(async () => {
  await forge.stop().catch(() => {});
  cleanupRepos();
});

const refsOf = (d: string) => git(d, 'for-each-ref', 'refs/trellis');
const ids = (json: string) => (JSON.parse(json) as { id: string }[]).map((i) => i.id);

describe('forge issues in the merged read', () => {
  it('interleaves local and forge issues newest first, with nodes from the marker and from pull requests', async () => {
    const all = JSON.parse(await ok(dir, ['issue', 'ls', '--all', '--json']));
    expect(all.map((i: { id: string }) => i.id)).toEqual(['cancelpacked', 'github.com#2', 'currencyq001', 'pwreset30min', 'srch4nothing', 'github.com#1', 'paydoublechg']);
    const gh1 = all.find((i: { id: string }) => i.id === 'github.com#1');
    expect(gh1).toMatchObject({ store: 'github.com', nodes: ['checkout'], labels: [{ name: 'bug', color: 'd73a4a' }], replies: [{ by: 'alice', body: 'Seen on iPhone SE too.' }] });
    expect(all.find((i: { id: string }) => i.id === 'github.com#2').nodes).toEqual(['catalog/browse']);
    expect(ids(await ok(dir, ['issue', 'ls', '--json', '--store', 'github.com']))).toEqual(['github.com#2', 'github.com#1']);
    expect(ids(await ok(dir, ['issue', 'ls', '--json', '--node', 'checkout']))).toEqual(['github.com#1']);
  });

  it('shows a forge issue by id in the CLI and over HTTP; unknown forge ids are 404 / exit 1', async () => {
    const shown = JSON.parse(await ok(dir, ['issue', 'show', 'github.com#1', '--json']));
    expect(shown).toMatchObject({ id: 'github.com#1', concern: 'Checkout button overlaps the footer', body: 'On small screens.' });
    const api = await serveDir(dir);
    try {
      await api.live.project.forges.refresh();
      expect(await (await api.get('/api/issues/github.com%231')).json()).toEqual(shown);
      expect((await api.get('/api/issues/github.com%2399')).status).toBe(404);
      expect((await api.get('/api/issues/gitlab.com%231')).status).toBe(404);
      const list = await (await api.get('/api/issues')).json();
      expect(list.stores).toEqual(['local', 'github.com']);
    } finally {
      await api.close();
    }
    const r = await trellis(dir, ['issue', 'show', 'github.com#99']);
    expect([r.code, r.stderr]).toEqual([1, 'trellis: no issue github.com#99\n']);
  });
});

describe('writes across stores', () => {
  it('opens, replies to and closes a forge issue through its driver, answering with the read-back', async () => {
    const opened = JSON.parse(await ok(dir, ['issue', 'open', 'Tea tins arrive dented', '--store', 'github.com', '--node', 'ops/inventory', '--body', 'Packing, see [[orders]].', '--json']));
    const number = Number(opened.id.split('#')[1]);
    expect(forge.issues[number - 1]!.body).toBe('Packing, see [[orders]].\n\nSpec: ops/inventory, orders');
    expect(opened).toMatchObject({ store: 'github.com', nodes: ['ops/inventory', 'orders'], body: 'Packing, see [[orders]].', by: 'trellis-bot' });

    const shot = join(dir, '..', 'shot.png');
    writeFileSync(shot, 'png-bytes');
    const hash = (await ok(dir, ['evidence', 'put', shot])).trim();
    expect(await ok(dir, ['issue', 'reply', opened.id, '--body', 'Photo attached', '--evidence', hash])).toBe('1\n');
    expect(forge.comments.at(-1)!.body).toMatch(new RegExp(`^Photo attached\\n\\n!\\[evidence ${hash.slice(0, 12)}\\]\\(.*${hash}\\)$`));
    expect(await ok(dir, ['issue', 'close', opened.id])).toBe(`${opened.id} closed\n`);
    expect(forge.issues[number - 1]!.state).toBe('closed');
  });

  it('promotes an open local thread: forge issue first (marker, evidence, footer), then the thread lands with the permalink', async () => {
    const shot = join(dir, '..', 'reset.png');
    writeFileSync(shot, 'reset-bytes');
    const hash = (await ok(dir, ['evidence', 'put', shot])).trim();
    await ok(dir, ['issue', 'reply', 'pwreset30min', '--body', 'Screenshot of the expired link', '--evidence', hash]);
    const promoted = JSON.parse(await ok(dir, ['issue', 'promote', 'pwreset30min', '--json'], { env: { TRELLIS_SESSION: 's-42' } }));
    const created = forge.issues.at(-1)!;
    expect(created.title).toBe('Reset links expire before slow mail arrives');
    expect(created.body).toContain('Spec: accounts/password-reset');
    expect(created.body).toContain(`Evidence: sha256:${hash}`);
    expect(created.body).toContain('Promoted from local thread pwreset30min by s-42 with trellis.');
    const permalink = `https://github.com/acme/shop/issues/${created.number}`;
    expect(promoted).toMatchObject({ id: 'pwreset30min', status: 'landed', url: permalink });
    expect(promoted.replies.at(-1)).toMatchObject({ by: 's-42', body: `Promoted to github.com#${created.number}: ${permalink}` });
    expect(git(dir, 'log', '-1', '--format=%s', 'refs/trellis/issues/pwreset30min').trim()).toBe(`promote: github.com#${created.number}`);

    // The forge issue is bound to the same nodes through the ordinary read.
    const viaLs = JSON.parse(await ok(dir, ['issue', 'ls', '--json', '--node', 'accounts/password-reset']));
    expect(viaLs.map((i: { id: string }) => i.id)).toEqual([`github.com#${created.number}`]);

    for (const id of ['pwreset30min', 'paydoublechg', `github.com#${created.number}`]) {
      const again = await trellis(dir, ['issue', 'promote', id]);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/only an open (local )?thread promotes/);
    }
  });

  it('with the forge down: ls degrades to local with one stderr line; promote, reply, close and open --store fail loud and write nothing', async () => {
    const api = await serveDir(dir);
    try {
      await api.live.project.forges.refresh();
      await forge.goDown();
      const before = refsOf(dir);
      const tip = git(dir, 'rev-parse', 'refs/trellis/issues/srch4nothing').trim();

      const ls = await trellis(dir, ['issue', 'ls', '--json']);
      expect(ls.code).toBe(0);
      expect(ls.stderr.trim().split('\n')).toHaveLength(1);
      expect(ls.stderr).toMatch(/^trellis: github\.com is unreachable .*local/);
      expect(ids(ls.stdout)).toContain('srch4nothing');

      for (const args of [
        ['issue', 'promote', 'srch4nothing'],
        ['issue', 'reply', 'github.com#1', '--body', 'x'],
        ['issue', 'close', 'github.com#1'],
        ['issue', 'open', 'x', '--store', 'github.com'],
      ]) {
        const r = await trellis(dir, args);
        expect({ args, code: r.code }).toEqual({ args, code: 1 });
        expect(r.stderr).toMatch(/github\.com is unreachable/);
      }
      const viaHttp = await api.get('/api/issues/github.com%231/reply', post({ body: 'x' }));
      expect(viaHttp.status).toBe(502);
      expect((await viaHttp.json()).error).toMatchObject({ code: 'FORGE_UNREACHABLE', message: expect.stringContaining('github.com is unreachable') });
      expect((await api.get('/api/issues/srch4nothing/promote', post({}))).status).toBe(502);

      // The server's resident slice still answers, without waiting on the forge.
      const resident = await (await api.get('/api/issues')).json();
      expect(resident.issues.map((i: { id: string }) => i.id)).toContain('github.com#1');

      expect(refsOf(dir)).toBe(before);
      expect(git(dir, 'rev-parse', 'refs/trellis/issues/srch4nothing').trim()).toBe(tip);
    } finally {
      await forge.comeBack();
      await api.close();
    }
  });

  it('two promotes of one thread at once make one forge issue; the other is refused', async () => {
    const api = await serveDir(dir);
    try {
      const before = forge.issues.length;
      const [a, b] = await Promise.all([api.get('/api/issues/cancelpacked/promote', post({})), api.get('/api/issues/cancelpacked/promote', post({}))]);
      expect([a.status, b.status].sort()).toEqual([200, 409]);
      expect(forge.issues.length).toBe(before + 1);
    } finally {
      await api.close();
    }
  });

  it('two CLI processes promoting one thread make one forge issue and one promotion; the other exits saying the thread is held', async () => {
    const { id } = JSON.parse(await ok(dir, ['issue', 'open', 'Gift cards double-count tax', '--json']));
    const before = forge.issues.length;
    // Each create is held at the forge until a second create arrives (two processes both got past every
    // check: the race is lost) or one of the two processes has finished; no sleeping either way.
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let creates = 0;
    forge.holdCreates = { until: released, arrived: () => ++creates === 2 && release() };
    try {
      // A short lock wait: the loser, blocked behind the winner's held create, gives up and exits first.
      const env = { TRELLIS_LOCK_WAIT_MS: '1500' };
      const runs = [trellis(dir, ['issue', 'promote', id], { env }), trellis(dir, ['issue', 'promote', id], { env })];
      void Promise.race(runs).then(release, release);
      const results = await Promise.all(runs);
      expect(results.map((r) => r.code).sort()).toEqual([0, 1]);
      expect(creates).toBe(1);
      expect(forge.issues.length).toBe(before + 1);
      const loser = results.find((r) => r.code === 1)!;
      expect(loser.stderr).toMatch(new RegExp(`^trellis: ${id} was not promoted; promote it again once the other writer is done .*another writer holds it`));
      const subjects = git(dir, 'log', '--format=%s', `refs/trellis/issues/${id}`).trim().split('\n');
      expect(subjects.filter((s) => s.startsWith('promote:'))).toEqual([`promote: github.com#${forge.issues.length}`]);
      const again = await trellis(dir, ['issue', 'promote', id]);
      expect([again.code, again.stderr]).toEqual([1, 'trellis: the thread is landed: only an open thread promotes\n']);
    } finally {
      forge.holdCreates = undefined;
      release();
    }
  });

  it('over HTTP, promote is authored by the project’s git user.name and answers with the read-back', async () => {
    const api = await serveDir(dir);
    try {
      const r = await api.get('/api/issues/currencyq001/promote', post({}));
      expect(r.status).toBe(200);
      const body = await r.json();
      expect(body).toMatchObject({ status: 'landed', replies: [{ by: 'human', body: expect.stringMatching(/^Promoted to github.com#\d+: /) }] });
      expect(forge.issues.at(-1)!.body).toContain('by human with trellis');
    } finally {
      await api.close();
    }
  });
});

describe('loop-in', () => {
  it('a reply notifies the thread’s originator session when it is online, never when offline, never for a forge issue', async () => {
    const repo = tempRepo();
    configure(repo, forge);
    const online = new Set<string>();
    const told: [string, string][] = [];
    const sessions: SessionRegistry = { isOnline: (id) => online.has(id), notify: async (id, msg) => void told.push([id, msg]) };
    const p = openProject(repo, { sessions });
    const { id } = await openIssue(p, { concern: 'Agent question', by: 's-7' });
    expect((await replyToIssue(p, id, { body: 'while offline', by: 'bob' })).loopedIn).toBeNull();
    online.add('s-7');
    expect((await replyToIssue(p, id, { body: 'now online', by: 'bob' })).loopedIn).toBe('s-7');
    expect((await replyToIssue(p, id, { body: 'own reply', by: 's-7' })).loopedIn).toBeNull();
    // The reply itself reaches the agent, marked as a reply from its author on that thread.
    expect(told).toEqual([['s-7', `Reply from bob on issue "Agent question" ${id}:\n\nnow online\n\n(answer on the thread: trellis issue reply ${id} --body ...)`]]);
    online.add('octocat');
    expect((await replyToIssue(p, 'github.com#1', { body: 'forge reply', by: 'bob' })).loopedIn).toBeNull();
    expect(told).toHaveLength(1);
  });
});
