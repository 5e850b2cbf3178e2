import { readFileSync } from 'node:fs';
import { type } from 'arktype';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forgejoReads } from '../../src/store/forge/forgejo-reads.js';
import { gitlabReads } from '../../src/store/forge/gitlab-reads.js';
import { ForgejoForge } from './forgejo-forge.js';
import { GitLabForge } from './gitlab-forge.js';

/*
 * GitLab's and Forgejo's published shapes, recorded under recorded/, held against both sides: what each
 * driver reads must be there (a field renamed or dropped in the recording fails here, by name), and each
 * stand-in must answer with every key the recording has, of the same kind.
 */

const recorded = (name: string) => JSON.parse(readFileSync(new URL(`./recorded/${name}.json`, import.meta.url), 'utf8')) as Record<string, unknown>;
const gl = recorded('gitlab');
const fj = recorded('forgejo');

/** Keys (sorted) and the kinds of their values, nested; a recorded null matches any kind (assignee, closed_at...). */
function sameShape(mine: unknown, theirs: unknown, at = '$'): string[] {
  if (theirs === null || mine === null) return [];
  if (Array.isArray(theirs)) return Array.isArray(mine) ? (theirs.length && mine.length ? sameShape(mine[0], theirs[0], `${at}[0]`) : []) : [`${at}: not an array`];
  if (typeof theirs === 'object') {
    if (typeof mine !== 'object') return [`${at}: not an object`];
    return Object.keys(theirs as object).flatMap((k) => (k in (mine as object) ? sameShape((mine as Record<string, unknown>)[k], (theirs as Record<string, unknown>)[k], `${at}.${k}`) : [`${at}.${k}: missing`]));
  }
  return typeof mine === typeof theirs ? [] : [`${at}: ${typeof mine}, recorded ${typeof theirs}`];
}

/** The top-level fields a schema cannot do without: each one deleted from the sample in turn. */
function requiredFields(schema: (v: unknown) => unknown, sample: Record<string, unknown>): string[] {
  return Object.keys(sample).filter((k) => {
    const { [k]: _, ...rest } = sample;
    return schema(rest) instanceof type.errors;
  });
}

let gitlab: GitLabForge;
let forgejo: ForgejoForge;
beforeAll(async () => {
  gitlab = await new GitLabForge().start();
  forgejo = await new ForgejoForge().start();
  gitlab.seed({ title: 'One', body: 'x', labels: ['bug'] });
  gitlab.seed({ title: 'Two' });
  gitlab.seedComment(1, 'hello', 'alice');
  forgejo.seed({ title: 'One', body: 'x', labels: ['bug'] });
  forgejo.seed({ title: 'Two' });
  forgejo.seedComment(1, 'hello', 'alice');
});
afterAll(async () => {
  await gitlab.stop();
  await forgejo.stop();
});

describe('GitLab: the driver reads what GitLab documents; the stand-in answers it', () => {
  it('the recorded issue and note carry every field the driver reads, and nothing else is required', () => {
    expect(gitlabReads.issue(gl.issue)).not.toBeInstanceOf(type.errors);
    expect(gitlabReads.note(gl.note)).not.toBeInstanceOf(type.errors);
    expect(requiredFields(gitlabReads.issue, gl.issue as Record<string, unknown>).sort()).toEqual(['author', 'created_at', 'description', 'iid', 'labels', 'state', 'title', 'updated_at', 'user_notes_count', 'web_url']);
    expect(requiredFields(gitlabReads.note, gl.note as Record<string, unknown>).sort()).toEqual(['author', 'body', 'created_at', 'id', 'system', 'updated_at']);
    // A renamed field is named in the refusal.
    const { iid, ...renamed } = gl.issue as Record<string, unknown>;
    expect(String(gitlabReads.issue({ ...renamed, number: iid }))).toContain('iid');
  });

  it('the stand-in’s issue, note and headers have the recorded shape', async () => {
    const res = await fetch(`${gitlab.apiUrl}/projects/acme%2Fshop/issues?with_labels_details=true&per_page=1`);
    const [issue] = (await res.json()) as unknown[];
    expect(sameShape(issue, gl.issue)).toEqual([]);
    const [note] = (await (await fetch(`${gitlab.apiUrl}/projects/42/issues/1/notes`)).json()) as unknown[];
    expect(sameShape(note, gl.note)).toEqual([]);
    for (const h of [...(gl.pagination_headers as string[]), ...(gl.rate_limit_headers as string[])]) expect(res.headers.has(h), h).toBe(true);
  });
});

describe('Forgejo: the driver reads what the swagger models hold; the stand-in answers them', () => {
  it('the recorded issue and comment carry every field the driver reads, and nothing else is required', () => {
    expect(forgejoReads.issue(fj.issue)).not.toBeInstanceOf(type.errors);
    expect(forgejoReads.comment(fj.comment)).not.toBeInstanceOf(type.errors);
    expect(requiredFields(forgejoReads.issue, fj.issue as Record<string, unknown>).sort()).toEqual(['body', 'created_at', 'html_url', 'labels', 'number', 'state', 'title', 'updated_at', 'user']);
    expect(requiredFields(forgejoReads.comment, fj.comment as Record<string, unknown>).sort()).toEqual(['body', 'created_at', 'id', 'issue_url', 'updated_at', 'user']);
    const { number, ...renamed } = fj.issue as Record<string, unknown>;
    expect(String(forgejoReads.issue({ ...renamed, index: number }))).toContain('number');
  });

  it('the stand-in’s issue, comment and headers have the recorded shape', async () => {
    const res = await fetch(`${forgejo.apiUrl}/repos/acme/shop/issues?state=all&type=issues&limit=1`);
    const [issue] = (await res.json()) as unknown[];
    expect(sameShape(issue, fj.issue)).toEqual([]);
    const [comment] = (await (await fetch(`${forgejo.apiUrl}/repos/acme/shop/issues/comments`)).json()) as unknown[];
    expect(sameShape(comment, fj.comment)).toEqual([]);
    for (const h of fj.pagination_headers as string[]) expect(res.headers.has(h), h).toBe(true);
  });
});
