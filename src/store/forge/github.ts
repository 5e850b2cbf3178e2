import { type } from 'arktype';
import { TrellisError } from '../../events/index.js';
import type { Issue, IssueEvent, Label, Reply } from '../../projections/index.js';
import type { ForgeConfig } from '../project/config.js';
import { forgeId, type ForgeDriver, type ForgeEntry, type ForgeListing, type ProbeStep } from './driver.js';
import { allPages, ForgeHttp, utc, type ForgeResponse } from './http.js';
import { checkOwnerName } from './config-checks.js';
import { probeForge } from './probe.js';
import { readMarker, referencedIssues } from './marker.js';
import { issueOfUrl, named, numberAt, readEach } from './reads.js';
import { FORGE_DEFAULTS } from './defaults.js';

const ghUser = type({ login: 'string' }).or('null');

/** The fields of GitHub's REST objects this driver reads (its OpenAPI `issue`, `issue-comment`, `issue-event`); nothing else is trusted to be there. */
export const githubReads = {
  issue: type({
    number: 'number',
    title: 'string',
    'body?': 'string | null',
    state: 'string',
    html_url: 'string',
    user: ghUser,
    labels: type('string').or(type({ name: 'string', 'color?': 'string | null' })).array(),
    created_at: 'string.date',
    updated_at: 'string.date',
    'pull_request?': 'unknown',
  }),
  comment: type({ issue_url: 'string', 'body?': 'string | null', user: ghUser, created_at: 'string.date', updated_at: 'string.date' }),
  event: type({ event: 'string', actor: ghUser, created_at: 'string.date' }),
};
type GhIssue = typeof githubReads.issue.infer;
type GhComment = typeof githubReads.comment.infer;

/** GitHub's issue events that are the Issue's lifecycle; the rest (labeled, assigned, referenced...) are not. */
const LIFECYCLE: Record<string, IssueEvent['type']> = { closed: 'closed', reopened: 'reopened', renamed: 'edited' };

interface Page<T> {
  readonly etag: string | null;
  readonly items: T[];
  readonly next: string | null;
}

const PER_PAGE = 100;

/**
 * The GitHub driver: REST v3 against https://api.github.com or a configured API URL (GitHub
 * Enterprise). Token from the environment variable the config names (`GITHUB_TOKEN` by default).
 * Listings follow Link headers and are conditional: every page is asked with the ETag it had, so an
 * unchanged poll is all 304s (free of rate limit on GitHub). When the rate limit is exhausted, it says
 * so, with the reset time, and sends nothing until then.
 */
export class GitHubDriver implements ForgeDriver {
  readonly store: string;
  private readonly api: string;
  private readonly pages = new Map<string, Page<unknown>>();
  private readonly http: ForgeHttp;

  constructor(
    private readonly config: ForgeConfig,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.store = config.host;
    this.api = (config.apiUrl ?? FORGE_DEFAULTS.github!.apiUrl(config.host)).replace(/\/+$/, '');
    const tokenEnv = config.tokenEnv ?? FORGE_DEFAULTS.github!.tokenEnv;
    this.http = new ForgeHttp({
      store: this.store,
      api: this.api,
      env,
      headers: () => {
        const token = env[tokenEnv];
        return { Accept: 'application/vnd.github+json', 'X-GitHub-Api-Version': '2022-11-28', ...(token ? { Authorization: `Bearer ${token}` } : {}) };
      },
      hint: (status) =>
        status === 401 ? `; set ${tokenEnv} to a token with access to ${config.repo}` : status === 404 ? `; check "repo": "${config.repo}" in trellis.json and the token's access` : '',
    });
    checkOwnerName(config);
  }

  async list(): Promise<ForgeListing> {
    const stats = { requests: 0, notModifiedRequests: 0 };
    const rawIssues = await this.all<unknown>(`/repos/${this.config.repo}/issues?state=all&per_page=${PER_PAGE}`, stats);
    const rawComments = await this.all<unknown>(`/repos/${this.config.repo}/issues/comments?per_page=${PER_PAGE}`, stats);
    // Each object read on its own: one GitHub cannot be read for is left out with a note, the rest listed.
    const issues = readEach(githubReads.issue, rawIssues, this.store, 'an issue', (raw) => named('issue', numberAt(raw, 'number')));
    const comments = readEach(githubReads.comment, rawComments, this.store, 'a comment', (raw) => named('a comment on issue', issueOfUrl(raw.issue_url)));
    return { entries: this.translate(issues.items, comments.items), notes: [...issues.notes, ...comments.notes], notModified: stats.requests === stats.notModifiedRequests, ...stats };
  }

  async timeline(number: number): Promise<{ events: IssueEvent[]; notes: string[] }> {
    const read = { notes: [] as string[] };
    const events = await allPages(this.http, `${this.api}/repos/${this.config.repo}/issues/${number}/events?per_page=${PER_PAGE}`, { requests: 0 }, (v) => {
      const page = readEach(githubReads.event, v, this.store, 'an event', () => named(`an event of issue`, number));
      read.notes.push(...page.notes);
      return page.items;
    });
    const out = events.flatMap((e): IssueEvent[] => (LIFECYCLE[e.event] ? [{ type: LIFECYCLE[e.event]!, by: e.actor?.login ?? 'ghost', at: utc(e.created_at) }] : []));
    return { events: out, notes: read.notes };
  }

  async create(input: { title: string; body: string }): Promise<{ number: number; url: string }> {
    const created = (await this.request('POST', `/repos/${this.config.repo}/issues`, input)).json as GhIssue;
    return { number: created.number, url: created.html_url };
  }

  async comment(number: number, body: string): Promise<void> {
    await this.request('POST', `/repos/${this.config.repo}/issues/${number}/comments`, { body });
  }

  async close(number: number): Promise<void> {
    await this.request('PATCH', `/repos/${this.config.repo}/issues/${number}`, { state: 'closed' });
  }

  probe(): Promise<ProbeStep[]> {
    const tokenEnv = this.config.tokenEnv ?? FORGE_DEFAULTS.github!.tokenEnv;
    return probeForge(this.http, {
      store: this.store,
      api: this.api,
      tokenEnv,
      token: this.env[tokenEnv],
      scopes: 'the repo scope (classic), or Issues: read and write on the repository (fine-grained)',
      userPath: '/user',
      projectPath: `/repos/${this.config.repo}`,
      projectKey: `"repo": "${this.config.repo}"`,
    });
  }

  /** Translates once, at the boundary: nothing downstream sees a GitHub field. */
  private translate(items: readonly GhIssue[], comments: readonly GhComment[]): ForgeEntry[] {
    const repliesOf = new Map<number, Reply[]>();
    const lastComment = new Map<number, string>();
    for (const c of comments) {
      const n = issueOfUrl(c.issue_url);
      if (!n) continue;
      repliesOf.set(n, [...(repliesOf.get(n) ?? []), { by: c.user?.login ?? 'ghost', at: utc(c.created_at), body: c.body ?? '' }]);
      if ((lastComment.get(n) ?? '') < utc(c.updated_at)) lastComment.set(n, utc(c.updated_at));
    }
    // Pull requests are not issues, but one that references an issue and carries a marker binds it too.
    const viaPulls = new Map<number, string[]>();
    for (const pr of items.filter((i) => i.pull_request)) {
      const { nodes } = readMarker(pr.body ?? '');
      if (!nodes.length) continue;
      for (const n of referencedIssues(pr.body ?? '', this.config.repo)) viaPulls.set(n, [...(viaPulls.get(n) ?? []), ...nodes]);
    }
    return items
      .filter((i) => !i.pull_request)
      .map((i): ForgeEntry => {
        const { nodes, body } = readMarker(i.body ?? '');
        const issue: Issue = {
          id: forgeId(this.store, i.number),
          store: this.store,
          concern: i.title,
          by: i.user?.login ?? 'ghost',
          status: i.state,
          nodes: [...new Set([...nodes, ...(viaPulls.get(i.number) ?? [])])],
          // As every store's: ISO 8601 in UTC with milliseconds (GitHub writes whole seconds), so times compare as strings.
          created: utc(i.created_at),
          body,
          replies: repliesOf.get(i.number) ?? [],
          evidence: [],
          labels: i.labels.map((l): Label => (typeof l === 'string' ? { name: l } : { name: l.name, ...(l.color ? { color: l.color } : {}) })),
          url: i.html_url,
        };
        const updated = [utc(i.updated_at), lastComment.get(i.number) ?? ''].sort().at(-1)!;
        return { issue, updated };
      });
  }

  /** Every page of a listing, each asked conditionally with the ETag it last had. */
  private async all<T>(first: string, stats: { requests: number; notModifiedRequests: number }): Promise<T[]> {
    const out: T[] = [];
    for (let url: string | null = `${this.api}${first}`; url; ) {
      const cached = this.pages.get(url) as Page<T> | undefined;
      const res = await this.request('GET', url, undefined, cached?.etag ?? undefined);
      stats.requests++;
      let page: Page<T>;
      if (res.status === 304 && cached) {
        stats.notModifiedRequests++;
        page = cached;
      } else {
        page = { etag: res.headers.get('etag'), items: res.json as T[], next: nextLink(res.headers.get('link')) };
        this.pages.set(url, page as Page<unknown>);
      }
      out.push(...page.items);
      url = page.next;
    }
    return out;
  }

  private request(method: string, pathOrUrl: string, body?: unknown, etag?: string): Promise<ForgeResponse> {
    return this.http.request(method, pathOrUrl, body, etag ? { 'If-None-Match': etag } : {});
  }
}

function nextLink(link: string | null): string | null {
  if (!link) return null;
  for (const part of link.split(',')) {
    const m = /<([^>]+)>\s*;\s*rel="?next"?/.exec(part);
    if (m) return m[1]!;
  }
  return null;
}
