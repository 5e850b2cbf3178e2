import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { type } from 'arktype';
import { githubReads } from '../../src/store/forge/github.js';
import { GitHubForge } from './github-forge.js';

const require = createRequire(import.meta.url);
const recorded = (scenario: string) => require(`@octokit/fixtures/scenarios/api.github.com/${scenario}/normalized-fixture.json`) as { method: string; path: string; status: number; response: unknown; headers: Record<string, string> }[];

/** The shape of a JSON value: keys (sorted) and the kinds of their values, nested. */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) return v.length ? [shape(v[0])] : [];
  if (v === null) return 'null';
  if (typeof v === 'object') return Object.fromEntries(Object.keys(v as object).sort().map((k) => [k, shape((v as Record<string, unknown>)[k])]));
  return typeof v;
}

/** Keys only, where a recorded null may be a value here (assignee, milestone, closed_at...). */
const keys = (v: unknown) => Object.keys(v as object).sort();

let forge: GitHubForge;
beforeAll(async () => {
  forge = await new GitHubForge().start();
  for (let i = 1; i <= 5; i++) forge.seed({ title: `Test issue ${i}`, body: 'x' });
});
afterAll(() => forge.stop());

describe('the local forge speaks GitHub’s shapes (checked against @octokit/fixtures recordings)', () => {
  it('an issue in a listing has exactly the recorded keys, user included', async () => {
    const rec = recorded('paginate-issues')[0]!;
    const mine = (await (await fetch(`${forge.apiUrl}/repos/acme/shop/issues?per_page=3`)).json()) as Record<string, unknown>[];
    const theirs = (rec.response as Record<string, unknown>[])[0]!;
    expect(keys(mine[0])).toEqual(keys(theirs));
    expect(shape(mine[0]!.user)).toEqual(shape(theirs.user));
    expect(shape(mine[0]!.reactions)).toEqual(shape(theirs.reactions));
    for (const k of ['number', 'title', 'state', 'created_at', 'html_url', 'comments', 'locked']) expect(typeof mine[0]![k]).toBe(typeof theirs[k]);
  });

  it('paginates with a Link header of the recorded form', async () => {
    const rec = recorded('paginate-issues')[0]!;
    const res = await fetch(`${forge.apiUrl}/repos/acme/shop/issues?per_page=3`);
    const pattern = (l: string) => l.replace(/<[^>]+>/g, '<url>');
    expect(pattern(res.headers.get('link')!)).toBe(pattern(rec.headers.link!));
    for (const h of ['etag', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-ratelimit-resource', 'x-ratelimit-used']) {
      expect(res.headers.has(h), h).toBe(true);
      expect(rec.headers).toHaveProperty(h);
    }
  });

  it('labels have the recorded shape', async () => {
    const rec = recorded('labels').find((r) => r.method === 'get' && r.path.endsWith('/labels'))!;
    const mine = (await (await fetch(`${forge.apiUrl}/repos/acme/shop/labels`)).json()) as unknown[];
    expect(shape(mine[0])).toEqual(shape((rec.response as unknown[])[0]));
  });

  it('the driver reads the recorded issue and issue event; the stand-in’s events have the recorded keys', async () => {
    const issue = (recorded('paginate-issues')[0]!.response as unknown[])[0];
    expect(githubReads.issue(issue)).not.toBeInstanceOf(type.errors);
    const sample = JSON.parse(readFileSync(new URL('./recorded/github.json', import.meta.url), 'utf8')) as { issue_event: Record<string, unknown> };
    expect(githubReads.event(sample.issue_event)).not.toBeInstanceOf(type.errors);
    await fetch(`${forge.apiUrl}/repos/acme/shop/issues/1`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"state":"closed"}' });
    const [event] = (await (await fetch(`${forge.apiUrl}/repos/acme/shop/issues/1/events`)).json()) as Record<string, unknown>[];
    expect(keys(event)).toEqual(keys(sample.issue_event));
    expect(shape(event!.actor)).toEqual(shape(sample.issue_event.actor));
    expect(event).toMatchObject({ event: 'closed', actor: { login: 'trellis-bot' } });
  });

  it('errors carry a message, as GitHub’s do', async () => {
    const rec = recorded('errors');
    const mine = await (await fetch(`${forge.apiUrl}/repos/acme/nope/issues`)).json();
    expect(mine).toHaveProperty('message');
    expect(rec.some((r) => r.status >= 400 && typeof (r.response as { message?: unknown }).message === 'string')).toBe(true);
  });
});
