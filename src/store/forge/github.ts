import { TrellisError } from '../../events/index.js';
import type { Issue, Label, Reply } from '../../projections/index.js';
import type { ForgeConfig } from '../project/config.js';
import { forgeId, type ForgeDriver, type ForgeEntry, type ForgeListing, type ProbeStep } from './driver.js';
import { ForgeHttp, type ForgeResponse } from './http.js';
import { probeForge } from './probe.js';
import { readMarker, referencedIssues } from './marker.js';
import { FORGE_DEFAULTS } from './defaults.js';

/** The subset of GitHub's issue object the adapter reads. */
interface GhIssue {
  number: number;
  title: string;
  body: string | null;
  state: string;
  html_url: string;
  user: { login: string } | null;
  labels: ({ name: string; color?: string | null } | string)[];
  created_at: string;
  updated_at: string;
  pull_request?: unknown;
}

interface GhComment {
  issue_url: string;
  body: string | null;
  user: { login: string } | null;
  created_at: string;
  updated_at: string;
}

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
    if (!/^[\w.-]+\/[\w.-]+$/.test(config.repo)) throw new TrellisError('INVALID_INPUT', `forge ${config.host}: "repo" must be owner/name, not ${JSON.stringify(config.repo)}`);
  }

  async list(): Promise<ForgeListing> {
    const stats = { requests: 0, notModifiedRequests: 0 };
    const issues = await this.all<GhIssue>(`/repos/${this.config.repo}/issues?state=all&per_page=${PER_PAGE}`, stats);
    const comments = await this.all<GhComment>(`/repos/${this.config.repo}/issues/comments?per_page=${PER_PAGE}`, stats);
    return { entries: this.translate(issues, comments), notModified: stats.requests === stats.notModifiedRequests, ...stats };
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
  private translate(items: GhIssue[], comments: GhComment[]): ForgeEntry[] {
    const repliesOf = new Map<number, Reply[]>();
    const lastComment = new Map<number, string>();
    for (const c of comments) {
      const n = Number(/\/issues\/(\d+)$/.exec(c.issue_url)?.[1]);
      if (!n) continue;
      repliesOf.set(n, [...(repliesOf.get(n) ?? []), { by: c.user?.login ?? 'ghost', at: c.created_at, body: c.body ?? '' }]);
      if ((lastComment.get(n) ?? '') < c.updated_at) lastComment.set(n, c.updated_at);
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
          created: i.created_at,
          body,
          replies: repliesOf.get(i.number) ?? [],
          evidence: [],
          labels: i.labels.map((l): Label => (typeof l === 'string' ? { name: l } : { name: l.name, ...(l.color ? { color: l.color } : {}) })),
          url: i.html_url,
        };
        const updated = [i.updated_at, lastComment.get(i.number) ?? ''].sort().at(-1)!;
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
