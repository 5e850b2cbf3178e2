import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ForgejoForge } from './forge/forgejo-forge.js';
import { GitHubForge } from './forge/github-forge.js';
import { GitLabForge } from './forge/gitlab-forge.js';
import { cleanupRepos, ok, ROOT, tempRepo } from './helpers/repo.js';
import { demoRepo, serveDir } from './helpers/server.js';
import { waitFor } from './helpers/wait.js';
import { trustForges } from './helpers/forge-trust.js';

/*
 * One Issue shape for every store (spec §2.1, issue 39): the keys of the spec's table, `url` besides on a
 * forge issue, whatever the store; the lifecycle timeline a read of its own, of one shape for all four.
 */

/** The spec's §2.1 table, `url` (optional) left out. */
const SPEC_KEYS = ['body', 'by', 'concern', 'created', 'evidence', 'id', 'labels', 'nodes', 'replies', 'status', 'store'];
const FORGE_KEYS = [...SPEC_KEYS, 'url'].sort();
const keys = (o: object) => Object.keys(o).sort();

let gh: GitHubForge;
let gl: GitLabForge;
let fj: ForgejoForge;
let dir: string;

beforeAll(async () => {
  [gh, gl, fj] = [await new GitHubForge().start(), await new GitLabForge().start(), await new ForgejoForge().start()];
  gh.seed({ title: 'Checkout button overlaps the footer', body: 'Spec: checkout', user: 'alice' });
  gl.seed({ title: 'Parcel tracking link 404s', body: 'Spec: orders', user: 'bob' });
  fj.seed({ title: 'Translate the catalog', body: 'Into Dutch.', user: 'carol' });
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
  // The stand-ins are plain http on loopback: allowed by the person's own uncommitted config (issue 46).
  trustForges(dir, [
    { host: 'github.com', apiUrl: gh.apiUrl },
    { host: 'gitlab.com', apiUrl: gl.apiUrl },
    { host: 'codeberg.org', apiUrl: fj.apiUrl },
  ]);
});
afterAll(async () => {
  for (const f of [gh, gl, fj]) await f.stop().catch(() => {});
  cleanupRepos();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const json = async (args: string[]): Promise<any> => JSON.parse(await ok(dir, [...args, '--json']));

describe('one Issue shape for every store', () => {
  it('issue open --json and issue show --json of a local, a GitHub, a GitLab and a Forgejo issue have the keys of the spec’s table (url besides on a forge issue)', async () => {
    const local = await json(['issue', 'open', 'Tea is too hot', '--body', 'Served at 95 °C.']);
    expect(keys(local)).toEqual(SPEC_KEYS);
    // An edited thread keeps the table's keys (it carried `edited` and `events` before): its changes are the timeline's.
    await ok(dir, ['issue', 'edit', local.id, '--concern', 'Tea is served too hot']);
    expect(keys(await json(['issue', 'show', local.id]))).toEqual(SPEC_KEYS);
    for (const store of ['github.com', 'gitlab.com', 'codeberg.org']) {
      const opened = await json(['issue', 'open', `Made on ${store}`, '--store', store]);
      expect([store, keys(opened)]).toEqual([store, FORGE_KEYS]);
      expect([store, keys(await json(['issue', 'show', `${store}#1`]))]).toEqual([store, FORGE_KEYS]);
    }
    // The list carries the same objects.
    for (const i of await json(['issue', 'ls', '--all'])) expect([i.id, keys(i)]).toEqual([i.id, i.store === 'local' ? (i.url ? FORGE_KEYS : SPEC_KEYS) : FORGE_KEYS]);
  });

  it('the timeline read answers one shape for all four stores: opened (the issue’s author and time), then closed and reopened with who and when', async () => {
    const local = (await ok(dir, ['issue', 'open', 'Scones run out', '--by', 'dave'])).trim();
    await ok(dir, ['issue', 'close', local, '--by', 'erin']);
    for (const store of ['github.com', 'gitlab.com', 'codeberg.org']) await ok(dir, ['issue', 'close', `${store}#1`]);
    // Reopened on the forges' own websites.
    gh.seedEvent(1, 'reopened', 'alice');
    gh.seedEvent(1, 'labeled', 'alice'); // not a lifecycle change: left out
    gl.stateEvents.push({ id: 990, iid: 1, user: 'bob', state: 'reopened', created: Date.parse('2030-01-01T00:00:00Z') });
    fj.events.push({ id: 990, number: 1, type: 'reopen', user: 'carol', created: Date.parse('2030-01-01T00:00:00Z') });
    fj.seedComment(1, 'a comment is a reply, not a timeline event', 'carol');

    const timelines: Record<string, any> = Object.fromEntries(await Promise.all([local, 'github.com#1', 'gitlab.com#1', 'codeberg.org#1'].map(async (id) => [id, await json(['issue', 'timeline', id])])));
    const listed: { id: string; by: string; created: string }[] = await json(['issue', 'ls', '--all']);
    for (const [id, t] of Object.entries(timelines)) {
      const shown = listed.find((i) => i.id === id)!;
      expect(keys(t)).toEqual(['carried', 'events', 'id', 'notes']);
      expect(t).toMatchObject({ id, notes: [] });
      for (const e of t.events) expect([id, keys(e)]).toEqual([id, ['at', 'by', 'type']]);
      expect([id, t.events.map((e: { type: string }) => e.type)]).toEqual([id, ['opened', 'closed', ...(id === local ? [] : ['reopened'])]]);
      expect(t.events[0]).toEqual({ type: 'opened', by: shown.by, at: shown.created });
      const ats = t.events.map((e: { at: string }) => e.at);
      expect(ats).toEqual([...ats].sort());
      for (const at of ats) expect(new Date(at).toISOString()).toBe(at);
    }
    expect(timelines[local].events[1].by).toBe('erin');
    expect(['github.com#1', 'gitlab.com#1', 'codeberg.org#1'].map((id) => timelines[id].events.map((e: { by: string }) => e.by))).toEqual([
      ['alice', 'trellis-bot', 'alice'],
      ['bob', 'trellis-bot', 'bob'],
      ['carol', 'trellis-bot', 'carol'],
    ]);
    // A title change is an edit on the forges that record one (GitHub's renamed, Forgejo's change_title).
    gh.seedEvent(1, 'renamed', 'alice', { from: 'Checkout button overlaps the footer', to: 'Checkout button hides the footer' });
    expect((await json(['issue', 'timeline', 'github.com#1'])).events.at(-1)).toMatchObject({ type: 'edited', by: 'alice' });

    // The same read over HTTP, for the page.
    const api = await serveDir(dir);
    try {
      // The server reads its resident forge slice, pulled in the background once it is up.
      const ids = [local, 'github.com#1', 'gitlab.com#1', 'codeberg.org#1'];
      await waitFor(async () => {
        const { issues } = (await (await api.get('/api/issues')).json()) as { issues: { id: string }[] };
        return ids.every((id) => issues.some((i) => i.id === id));
      }, 'the server lists the four issues', 30_000);
      for (const id of ids) {
        const res = await api.get(`/api/issues/${encodeURIComponent(id)}/timeline`);
        expect([id, res.status]).toEqual([id, 200]);
        const body = await res.json();
        expect(keys(body)).toEqual(['carried', 'events', 'id', 'notes']);
        expect(body.events[0]).toMatchObject({ type: 'opened' });
      }
      expect((await api.get('/api/issues/nosuchthread/timeline')).status).toBe(404);
    } finally {
      await api.close();
    }
  });

  it('a forge whose timeline cannot be read still answers opened, with one note naming the forge', async () => {
    gl.faults.push({ status: 500, path: /resource_state_events/ }, { status: 500, path: /resource_state_events/ }, { status: 500, path: /resource_state_events/ });
    const t = await json(['issue', 'timeline', 'gitlab.com#1']);
    expect(t.events.map((e: { type: string }) => e.type)).toEqual(['opened']);
    expect(t.notes).toHaveLength(1);
    expect(t.notes[0]).toMatch(/^gitlab\.com.*500/);
  });
});

describe('a repository written in the v1 format reads as it did', () => {
  it('issues --json and issue show --json of the v1 fixture are byte-identical to the recorded views', async () => {
    const repo = tempRepo();
    await ok(repo, ['issues', 'import', join(ROOT, 'fixtures/events/threads.ndjson')]);
    const expected = JSON.parse(readFileSync(join(ROOT, 'fixtures/events/threads.expected.json'), 'utf8')) as { issues: { id: string }[] };
    // The recorded views are the spec's table, as the v1 format wrote them (no field added since).
    for (const issue of expected.issues) expect([issue.id, keys(issue).filter((k) => k !== 'url')]).toEqual([issue.id, SPEC_KEYS]);
    expect(await ok(repo, ['issues', '--json'])).toBe(`${JSON.stringify(expected.issues)}\n`);
    for (const issue of expected.issues) expect(await ok(repo, ['issue', 'show', issue.id, '--json'])).toBe(`${JSON.stringify(issue, null, 2)}\n`);
  });
});
