import { afterAll, describe, expect, it } from 'vitest';
import type { ForgeDriver } from '../../src/store/forge/driver.js';
import { GitHubDriver } from '../../src/store/forge/github.js';
import { GitHubForge } from './github-forge.js';

const forges: GitHubForge[] = [];
afterAll(async () => {
  for (const f of forges) await f.stop().catch(() => {});
});

async function forge(opts = {}) {
  const f = await new GitHubForge(opts).start();
  forges.push(f);
  return f;
}

type Factory = (f: GitHubForge, env?: NodeJS.ProcessEnv, repo?: string) => ForgeDriver;

/** One contract, run against every forge driver. */
function runForgeDriverContract(name: string, make: Factory) {
  describe(`forge driver contract: ${name}`, () => {
    it('lists every issue across pages, translated once: ids, concern, status, replies, labels, nodes; pull requests are not issues', async () => {
      const f = await forge();
      for (let i = 1; i <= 230; i++) f.seed({ title: `Issue ${i}`, body: i % 2 ? `Body ${i}\n\nSpec: auth/login, billing` : null, labels: i === 1 ? ['bug'] : [] });
      f.seedComment(1, 'first comment', 'alice');
      f.seedComment(1, 'second comment', 'bob');
      const pr = f.seed({ title: 'Fix login', body: 'Fixes #2\n\nSpec: auth/session', pullRequest: true });
      const listing = await make(f).list();
      expect(listing.entries).toHaveLength(230);
      expect(listing.entries.some((e) => e.issue.id === `github.com#${pr}`)).toBe(false);
      expect(listing.requests).toBe(4); // 3 pages of issues, 1 of comments
      const one = listing.entries.find((e) => e.issue.id === 'github.com#1')!.issue;
      expect(one).toEqual({
        id: 'github.com#1',
        store: 'github.com',
        concern: 'Issue 1',
        by: 'octocat',
        status: 'open',
        nodes: ['auth/login', 'billing'],
        created: expect.any(String),
        body: 'Body 1',
        replies: [
          { by: 'alice', at: expect.any(String), body: 'first comment' },
          { by: 'bob', at: expect.any(String), body: 'second comment' },
        ],
        evidence: [],
        labels: [{ name: 'bug', color: 'd73a4a' }],
        url: 'https://github.com/acme/shop/issues/1',
      });
      expect(listing.entries.find((e) => e.issue.id === 'github.com#2')!.issue.nodes).toEqual(['auth/session']);
    });

    it('an unchanged forge costs only 304s; a change is seen on the next listing', async () => {
      const f = await forge();
      for (let i = 1; i <= 150; i++) f.seed({ title: `Issue ${i}` });
      const driver = make(f);
      await driver.list();
      const spent = f.rateLimit - f.rateRemaining;
      const again = await driver.list();
      expect(again).toMatchObject({ notModified: true, requests: 3, notModifiedRequests: 3 });
      expect(f.rateLimit - f.rateRemaining).toBe(spent);
      f.seedComment(150, 'new');
      const changed = await driver.list();
      expect(changed.notModified).toBe(false);
      expect(changed.entries.find((e) => e.issue.id === 'github.com#150')!.issue.replies).toHaveLength(1);
    });

    it('creates, comments on and closes issues', async () => {
      const f = await forge();
      const driver = make(f);
      const created = await driver.create({ title: 'New one', body: 'text\n\nSpec: cart' });
      expect(created).toEqual({ number: 1, url: 'https://github.com/acme/shop/issues/1' });
      await driver.comment(1, 'a comment');
      await driver.close(1);
      const issue = (await driver.list()).entries[0]!.issue;
      expect(issue).toMatchObject({ status: 'closed', nodes: ['cart'], body: 'text', replies: [{ body: 'a comment', by: 'trellis-bot' }] });
    });

    it('fails loud and precisely: down, bad token, unknown repo, invalid input, server error, slow, rate limit', async () => {
      const f = await forge({ token: 'sekrit', rateLimit: 100 });
      const good = make(f, { GITHUB_TOKEN: 'sekrit' });
      await expect(make(f, { GITHUB_TOKEN: 'wrong' }).list()).rejects.toMatchObject({ code: 'FORGE_FAILED', message: expect.stringMatching(/answered 401.*set GITHUB_TOKEN/) });
      await expect(make(f, { GITHUB_TOKEN: 'sekrit' }, 'acme/nope').list()).rejects.toMatchObject({ message: expect.stringMatching(/answered 404.*"repo": "acme\/nope"/) });
      await expect(good.create({ title: '', body: '' })).rejects.toMatchObject({ message: expect.stringMatching(/answered 422.*Validation Failed/) });
      f.mode = { fail: 503 };
      await expect(good.comment(1, 'x')).rejects.toMatchObject({ code: 'FORGE_FAILED', message: expect.stringContaining('answered 503') });
      f.mode = { slowMs: 500 };
      await expect(make(f, { GITHUB_TOKEN: 'sekrit', TRELLIS_FORGE_TIMEOUT_MS: '100' }).list()).rejects.toMatchObject({ code: 'FORGE_UNREACHABLE' });
      f.mode = {};
      f.rateRemaining = 0;
      const before = f.log.length;
      await expect(good.list()).rejects.toMatchObject({ message: expect.stringMatching(/rate limit exhausted until \d{4}-/) });
      await expect(good.list()).rejects.toMatchObject({ message: expect.stringMatching(/rate limit exhausted/) });
      expect(f.log.length).toBe(before + 1); // the second call never reached the forge
      await f.goDown();
      await expect(make(f, { GITHUB_TOKEN: 'sekrit' }).list()).rejects.toMatchObject({ code: 'FORGE_UNREACHABLE', message: expect.stringContaining('github.com is unreachable') });
    });
  });
}

runForgeDriverContract('GitHub', (f, env = {}, repo = `${f.owner}/${f.repo}`) => new GitHubDriver({ driver: 'github', host: 'github.com', repo, apiUrl: f.apiUrl }, env));
