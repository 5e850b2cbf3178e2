import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ForgeSlice } from '../../src/store/forge/slice.js';
import type { Settings } from '../../src/store/project/config.js';
import { forgejo, github, gitlab, subjects, type AnyForge, type Subject } from './standins.js';

/*
 * One contract, three forges: the same behaviour asked of the GitHub, GitLab and Forgejo drivers, each
 * against its own stand-in speaking its own forge's shapes.
 */

const TOKEN = 'sekrit';
const started: AnyForge[] = [];
afterAll(async () => {
  for (const f of started) await f.stop().catch(() => {});
});

// Retries back off 10 ms here, not 250: what is asserted is that they happen, not how long they wait.
const envFor = (s: Subject, token = TOKEN): NodeJS.ProcessEnv => ({ [s.tokenEnv]: token, TRELLIS_FORGE_BACKOFF_MS: '10' });

for (const s of subjects) {
  describe(`forge driver contract: ${s.name}`, () => {
    const start = async () => {
      const f = await s.start(TOKEN);
      started.push(f);
      return f;
    };
    const listGets = (f: AnyForge) => f.log.filter((r) => r.method === 'GET' && s.listPath.test(r.path));

    it('lists every issue to the last page, translated once into the Issue shape', async () => {
      const f = await start();
      const total = s.perPage * 2 + 30;
      for (let i = 1; i <= total; i++) f.seed({ title: `Issue ${i}`, body: i % 2 ? `Body ${i}\n\nSpec: auth/login, billing` : null, labels: i === 1 ? ['bug'] : [] });
      f.seedComment(1, 'first comment', 'alice');
      f.seedComment(1, 'second comment', 'bob');
      const listing = await s.driver(f, envFor(s)).list();
      expect(listing.entries).toHaveLength(total);
      expect(listGets(f).map((r) => new URL(r.path, 'http://x').searchParams.get('page') ?? '1')).toEqual(['1', '2', '3']);
      const one = listing.entries.find((e) => e.issue.id === `${s.store}#1`)!.issue;
      expect(one).toEqual({
        id: `${s.store}#1`,
        store: s.store,
        concern: 'Issue 1',
        by: 'octocat',
        status: 'open',
        nodes: ['auth/login', 'billing'],
        created: expect.stringMatching(/^2026-02-01T0\d:\d\d:00(\.000)?Z$/),
        body: 'Body 1',
        replies: [
          { by: 'alice', at: expect.any(String), body: 'first comment' },
          { by: 'bob', at: expect.any(String), body: 'second comment' },
        ],
        evidence: [],
        labels: [expect.objectContaining({ name: 'bug', color: 'd73a4a' })],
        url: s.permalink(1),
      });
      expect(listing.entries.find((e) => e.issue.id === `${s.store}#2`)!.issue).toMatchObject({ body: '', nodes: [] });
    });

    it('a later pull asks only for what changed; an unchanged forge says so', async () => {
      const f = await start();
      for (let i = 1; i <= 120; i++) f.seed({ title: `Issue ${i}` });
      const driver = s.driver(f, envFor(s));
      await driver.list();
      const before = f.log.length;
      f.seedComment(7, 'new news');
      const n = f.seed({ title: 'Brand new' });
      const changed = await driver.list();
      expect(changed.notModified).toBe(false);
      expect(changed.entries).toHaveLength(121);
      expect(changed.entries.find((e) => e.issue.id === `${s.store}#7`)!.issue.replies.map((r) => r.body)).toEqual(['new news']);
      expect(changed.entries.find((e) => e.issue.id === `${s.store}#${n}`)!.issue.concern).toBe('Brand new');
      const asked = f.log.slice(before);
      if (s.incremental === 'since') {
        // One short page of changed issues (and, on GitLab, the notes of the one with a new note).
        const lists = asked.filter((r) => s.listPath.test(r.path));
        expect(lists).toHaveLength(1);
        expect(new URL(lists[0]!.path, 'http://x').searchParams.get(s.sinceParam!)).toMatch(/^2026-02-0\dT/);
        expect(asked.length).toBeLessThanOrEqual(2);
      } else {
        expect(asked.every((r) => r.status === 200 || r.status === 304)).toBe(true);
      }
      const again = await driver.list();
      expect(again.notModified).toBe(true);
      expect(again.entries).toHaveLength(121);
    });

    it('creates (the Spec: marker in the body), comments on and closes an issue', async () => {
      const f = await start();
      const driver = s.driver(f, envFor(s));
      const created = await driver.create({ title: 'New one', body: 'text\n\nSpec: cart' });
      expect(created).toEqual({ number: 1, url: s.permalink(1) });
      expect((s as Subject<AnyForge>).bodyOf(f, 1)).toBe('text\n\nSpec: cart');
      await driver.comment(1, 'a comment');
      await driver.close(1);
      expect((s as Subject<AnyForge>).stateOf(f, 1)).toBe('closed');
      const issue = (await driver.list()).entries[0]!.issue;
      expect(issue).toMatchObject({ status: 'closed', nodes: ['cart'], body: 'text', replies: [{ body: 'a comment', by: 'trellis-bot' }] });
    });

    it('honours 429 with Retry-After: waits as asked, then asks again; a write refused with 429 lands once', async () => {
      const f = await start();
      f.seed({ title: 'One' });
      const driver = s.driver(f, envFor(s));
      f.faults.push({ status: 429, method: 'GET', path: s.listPath, headers: { 'retry-after': '1' }, body: { message: 'Too Many Requests' } });
      const t0 = Date.now();
      const listing = await driver.list();
      expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
      expect(listing.entries).toHaveLength(1);
      expect(listGets(f).map((r) => r.status)).toEqual([429, 200]);

      f.faults.push({ status: 429, method: 'POST', headers: { 'retry-after': '0' } });
      await driver.comment(1, 'once');
      expect((s as Subject<AnyForge>).commentsOn(f, 1)).toEqual(['once']);

      // A wait longer than the driver will hold a read for fails loud, and nothing is sent until it passed.
      f.faults.push({ status: 429, method: 'GET', headers: { 'retry-after': '3600' } });
      await expect(driver.list()).rejects.toMatchObject({ code: 'FORGE_FAILED', message: expect.stringMatching(new RegExp(`^${s.store}: rate limited \\(429\\).*until \\d{4}-`)) });
      const sent = f.log.length;
      await expect(driver.list()).rejects.toMatchObject({ message: expect.stringContaining('rate limit exhausted until') });
      expect(f.log.length).toBe(sent);
    });

    it('a 500 mid-pull is asked again; a pull that keeps failing fails loud and the next one still sees every change', async () => {
      const f = await start();
      for (let i = 1; i <= s.perPage + 5; i++) f.seed({ title: `Issue ${i}` });
      const driver = s.driver(f, envFor(s));
      f.faults.push({ status: 500, method: 'GET', path: /[?&]page=2/ });
      expect((await driver.list()).entries).toHaveLength(s.perPage + 5);
      expect(f.log.filter((r) => r.status === 500)).toHaveLength(1);

      f.seedComment(3, 'during the outage');
      for (let i = 0; i < 3; i++) f.faults.push({ status: 500, method: 'GET', path: s.listPath });
      await expect(driver.list()).rejects.toMatchObject({ code: 'FORGE_FAILED', message: expect.stringContaining(`${s.store} answered 500`) });
      const after = await driver.list();
      expect(after.entries.find((e) => e.issue.id === `${s.store}#3`)!.issue.replies.map((r) => r.body)).toEqual(['during the outage']);
    });

    if (s.incremental === 'since') it('an issue missing a field the driver reads is left out with a note naming the field; an answer that is no list fails loud', async () => {
      const f = await start();
      f.faults.push({ status: 200, method: 'GET', path: s.listPath, body: [{ title: 'no number, no dates' }] });
      const listing = await s.driver(f, envFor(s)).list();
      expect(listing.entries).toEqual([]);
      expect(listing.notes).toHaveLength(1);
      expect(listing.notes[0]).toMatch(new RegExp(`^${s.store}: issue \\(its number unreadable\\) is left out: .*"(iid|number)" must be`));
      f.faults.push({ status: 200, method: 'GET', path: s.listPath, body: { message: 'not a list' } });
      await expect(s.driver(f, envFor(s)).list()).rejects.toMatchObject({ code: 'FORGE_FAILED', message: expect.stringMatching(new RegExp(`^${s.store} answered a list of an issue that is not a JSON array`)) });
    });

    it('never writes twice: a POST whose answer was lost after it landed is not sent again', async () => {
      const f = await start();
      f.seed({ title: 'One' });
      const driver = s.driver(f, envFor(s));
      f.faults.push({ status: 502, method: 'POST', afterApplying: true });
      await expect(driver.comment(1, 'exactly once')).rejects.toMatchObject({ message: expect.stringContaining('answered 502') });
      expect((s as Subject<AnyForge>).commentsOn(f, 1)).toEqual(['exactly once']);
      expect(f.log.filter((r) => r.method === 'POST')).toHaveLength(1);
    });

    it('fails loud and precisely: a refused token, an unknown project, a forge down', async () => {
      const f = await start();
      await expect(s.driver(f, envFor(s, 'wrong')).list()).rejects.toMatchObject({ code: 'FORGE_FAILED', message: expect.stringMatching(new RegExp(`answered 401.*set ${s.tokenEnv}`)) });
      await expect(s.driver(f, envFor(s), s.missingProject).list()).rejects.toMatchObject({ message: expect.stringMatching(/answered 404/) });
      await expect(s.driver(f, envFor(s), s.missingProject).list()).rejects.toMatchObject({ message: expect.stringContaining(s.projectKey) });
      await f.goDown();
      await expect(s.driver(f, envFor(s)).list()).rejects.toMatchObject({ code: 'FORGE_UNREACHABLE', message: expect.stringContaining(`${s.store} is unreachable`) });
      await f.comeBack();
    });

    it('probes for doctor: reachable, token accepted, project found, each failure with its repair', async () => {
      const f = await start();
      expect(await s.driver(f, envFor(s)).probe()).toEqual([
        { ok: true, what: `forge ${s.store} accepts the token in ${s.tokenEnv}` },
        { ok: true, what: expect.stringContaining('found') },
      ]);
      expect(await s.driver(f, envFor(s, 'wrong')).probe()).toEqual([{ ok: false, what: expect.stringContaining(`refused the token in ${s.tokenEnv}`), repair: expect.stringContaining(`set ${s.tokenEnv}`) }]);
      expect((await s.driver(f, envFor(s), s.missingProject).probe())[1]).toEqual({ ok: false, what: expect.stringContaining(`${s.projectKey} not found`), repair: expect.stringContaining(`fix ${s.projectKey}`) });
      expect((await s.driver(f, {}).probe())[0]).toMatchObject({ ok: 'warn', what: expect.stringContaining(`${s.tokenEnv} is not set`) });
      await f.goDown();
      expect(await s.driver(f, envFor(s)).probe()).toEqual([{ ok: false, what: expect.stringContaining('unreachable'), repair: expect.stringContaining('"apiUrl"') }]);
      await f.comeBack();
    });
  });
}

describe('three forges in one slice', () => {
  it('one forge down degrades to the others, its failure named once; it comes back on the next refresh', async () => {
    const [gh, gl, fj] = [await github.start(TOKEN), await gitlab.start(TOKEN), await forgejo.start(TOKEN)];
    started.push(gh, gl, fj);
    for (const f of [gh, gl, fj] as AnyForge[]) f.seed({ title: 'Hello' });
    const settings = (): Settings =>
      ({
        // The stand-ins' loopback URLs and variable, as the person's own trellis.local.json names them.
        forgesFrom: 'local',
        forges: [
          { driver: 'github', host: 'github.com', repo: 'acme/shop', apiUrl: gh.apiUrl, tokenEnv: 'T' },
          { driver: 'gitlab', host: 'gitlab.com', repo: 'acme/shop', apiUrl: gl.apiUrl, tokenEnv: 'T' },
          { driver: 'forgejo', host: 'codeberg.org', repo: 'acme/shop', apiUrl: fj.apiUrl, tokenEnv: 'T' },
        ],
      }) as unknown as Settings;
    process.env.T = TOKEN;
    try {
      const slice = new ForgeSlice(settings);
      await gl.goDown();
      const { failures } = await slice.refresh();
      expect(failures).toEqual([expect.stringMatching(/^gitlab\.com is unreachable/)]);
      expect(slice.entries().map((e) => e.issue.id).sort()).toEqual(['codeberg.org#1', 'github.com#1']);
      await gl.comeBack();
      expect((await slice.refresh()).failures).toEqual([]);
      expect(slice.entries().map((e) => e.issue.id).sort()).toEqual(['codeberg.org#1', 'github.com#1', 'gitlab.com#1']);
    } finally {
      delete process.env.T;
    }
  });
});

describe('GitLab specifics', () => {
  it('names the project by id or by path (URL-encoded on the wire); RateLimit-Remaining: 0 stops requests until the reset', async () => {
    const f = await gitlab.start(TOKEN);
    started.push(f);
    f.seed({ title: 'One' });
    expect((await gitlab.driver(f, envFor(gitlab), '42').list()).entries.map((e) => e.issue.id)).toEqual(['gitlab.com#1']);
    const driver = gitlab.driver(f, envFor(gitlab), 'acme/shop');
    await driver.list();
    expect(f.log.at(-1)!.path).toMatch(/^\/api\/v4\/projects\/acme%2Fshop\/issues\?/);
    f.faults.push({ status: 200, body: [], headers: { 'ratelimit-remaining': '0', 'ratelimit-reset': String(Math.floor(Date.now() / 1000) + 120) } });
    await driver.list();
    const sent = f.log.length;
    await expect(driver.comment(1, 'x')).rejects.toMatchObject({ message: expect.stringMatching(/^gitlab\.com: API rate limit exhausted until \d{4}-/) });
    expect(f.log.length).toBe(sent);
  });
});

describe('a driver’s state between processes', () => {
  it('a new slice on the same cache pulls only what changed; a state saved for another project is not used', async () => {
    const f = await gitlab.start(TOKEN);
    started.push(f);
    for (let i = 1; i <= 3; i++) f.seed({ title: `Issue ${i}` });
    const cache = mkdtempSync(join(tmpdir(), 'forge-cache-'));
    const forges = (repo: string) => (): Settings => ({ forgesFrom: 'local', forges: [{ driver: 'gitlab', host: 'gitlab.com', repo, apiUrl: f.apiUrl, tokenEnv: 'T2' }] }) as unknown as Settings;
    process.env.T2 = TOKEN;
    try {
      await new ForgeSlice(forges('acme/shop'), undefined, cache).refresh();
      const from = f.log.length;
      const again = new ForgeSlice(forges('acme/shop'), undefined, cache);
      await again.refresh();
      expect(f.log.slice(from).map((r) => /updated_after=/.test(r.path))).toEqual([true]);
      expect(again.entries()).toHaveLength(3);
      const other = f.log.length;
      await new ForgeSlice(forges('42'), undefined, cache).refresh();
      expect(f.log.slice(other).map((r) => /updated_after=/.test(r.path))).toEqual([false]);
    } finally {
      delete process.env.T2;
      rmSync(cache, { recursive: true, force: true });
    }
  });
});
