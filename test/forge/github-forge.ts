/**
 * A local stand-in for GitHub's REST API: the subset the GitHub driver uses (issues, comments, labels),
 * with pagination by Link headers, ETag/304, tokens (401), unknown repos (404), validation (422),
 * failures (5xx), rate limiting, and slow and down modes. Response shapes follow GitHub's own, checked
 * against the recorded responses in @octokit/fixtures (forge-shapes.test.ts).
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { without, type Fault } from './standin-server.js';

export interface ForgeLabel {
  id: number;
  node_id: string;
  url: string;
  name: string;
  color: string;
  default: boolean;
  description: string | null;
}

interface StoredIssue {
  number: number;
  title: string;
  body: string | null;
  state: 'open' | 'closed';
  user: string;
  labels: string[];
  created_at: string;
  updated_at: string;
  closed_at: string | null;
  pull_request: boolean;
}

/** One of an issue's events (GitHub's issue events API): closed, reopened, renamed among them. */
interface StoredEvent {
  id: number;
  issue: number;
  event: string;
  user: string;
  created_at: string;
  rename?: { from: string; to: string };
}

interface StoredComment {
  id: number;
  issue: number;
  body: string;
  user: string;
  created_at: string;
  updated_at: string;
}

export interface ForgeOptions {
  readonly owner?: string;
  readonly repo?: string;
  /** When set, requests must carry `Authorization: Bearer <token>`. */
  readonly token?: string;
  readonly rateLimit?: number;
}

export class GitHubForge {
  readonly owner: string;
  readonly repo: string;
  readonly issues: StoredIssue[] = [];
  readonly comments: StoredComment[] = [];
  readonly events: StoredEvent[] = [];
  /** Issues (by number) answered without one field, as a forge that drifted would: the field's name. */
  readonly broken = new Map<number, string>();
  /** Comments (by id) answered without one field. */
  readonly brokenComments = new Map<number, string>();
  readonly labels: ForgeLabel[] = [
    { id: 1, node_id: 'MDU6TGFiZWwx', url: '', name: 'bug', color: 'd73a4a', default: true, description: "Something isn't working" },
    { id: 2, node_id: 'MDU6TGFiZWwy', url: '', name: 'enhancement', color: 'a2eeef', default: true, description: 'New feature or request' },
  ];
  /** `down`: refuse connections; `fail`: answer 502; `slowMs`: delay every answer. */
  mode: { down?: boolean; fail?: number; slowMs?: number } = {};
  rateRemaining: number;
  readonly rateLimit: number;
  /** Answers sent instead of the next matching requests' (see standin-server.ts): injected faults. */
  readonly faults: Fault[] = [];
  /** Every request seen: method, path and status, for assertions. */
  readonly log: { method: string; path: string; status: number }[] = [];
  /**
   * When set, an issue create is held (not applied, not answered) until `until` settles; `arrived` hears
   * of each held create first. Lets a test line two writers up at the forge without sleeping.
   */
  holdCreates: { until: Promise<unknown>; arrived?: () => void } | undefined;
  private server: http.Server;
  private port = 0;
  private clock = Date.UTC(2026, 1, 1);

  constructor(private readonly opts: ForgeOptions = {}) {
    this.owner = opts.owner ?? 'acme';
    this.repo = opts.repo ?? 'shop';
    this.rateLimit = opts.rateLimit ?? 5000;
    this.rateRemaining = this.rateLimit;
    this.server = this.makeServer();
  }

  get apiUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(port = 0): Promise<this> {
    this.server = this.makeServer();
    await new Promise<void>((resolve) => this.server.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** Stops listening: the forge is down (connections refused) until `start()` again on the same port. */
  async stop(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  async goDown(): Promise<void> {
    await this.stop();
  }

  async comeBack(): Promise<void> {
    await this.start(this.port);
  }

  /** Seeds an issue (or pull request) directly, as if made on the forge's website. */
  seed(input: { title: string; body?: string | null; user?: string; labels?: string[]; state?: 'open' | 'closed'; pullRequest?: boolean; at?: string }): number {
    const at = input.at ?? this.tick();
    const number = this.issues.length + 1;
    this.issues.push({
      number,
      title: input.title,
      body: input.body ?? null,
      state: input.state ?? 'open',
      user: input.user ?? 'octocat',
      labels: input.labels ?? [],
      created_at: at,
      updated_at: at,
      closed_at: input.state === 'closed' ? at : null,
      pull_request: input.pullRequest ?? false,
    });
    return number;
  }

  seedComment(issue: number, body: string, user = 'octocat'): void {
    const at = this.tick();
    this.comments.push({ id: 100 + this.comments.length, issue, body, user, created_at: at, updated_at: at });
    this.touch(issue, at);
  }

  /** An event of an issue, as if done on the forge's website (closed, reopened, renamed...). */
  seedEvent(issue: number, event: string, user = 'octocat', rename?: { from: string; to: string }): void {
    this.events.push({ id: 700 + this.events.length, issue, event, user, created_at: this.tick(), ...(rename ? { rename } : {}) });
  }

  private tick(): string {
    this.clock += 60_000;
    return new Date(this.clock).toISOString().replace('.000Z', 'Z');
  }

  private touch(number: number, at: string) {
    const i = this.issues.find((x) => x.number === number);
    if (i) i.updated_at = at;
  }

  private makeServer(): http.Server {
    return http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const answer = () => this.handle(req, Buffer.concat(chunks).toString(), res);
        const hold = req.method === 'POST' && new URL(req.url!, this.apiUrl).pathname === `/repos/${this.owner}/${this.repo}/issues` ? this.holdCreates : undefined;
        if (hold) {
          hold.arrived?.();
          void hold.until.then(answer, answer);
        } else if (this.mode.slowMs) setTimeout(answer, this.mode.slowMs);
        else answer();
      });
    });
  }

  private handle(req: http.IncomingMessage, body: string, res: http.ServerResponse): void {
    const url = new URL(req.url!, this.apiUrl);
    const at = this.faults.findIndex((f) => (!f.method || f.method === req.method) && (!f.path || f.path.test(url.pathname + url.search)));
    const fault = at >= 0 ? this.faults.splice(at, 1)[0] : undefined;
    const send = (status: number, json: unknown, headers: Record<string, string> = {}) => {
      if (fault) [status, json, headers] = [fault.status, fault.body ?? { message: `injected ${fault.status}` }, fault.headers ?? {}];
      this.log.push({ method: req.method!, path: url.pathname + url.search, status });
      const text = json === undefined ? '' : JSON.stringify(json);
      const etag = `W/"${createHash('sha1').update(text).digest('hex')}"`;
      const conditional = req.method === 'GET' && status === 200 && req.headers['if-none-match'] === etag;
      // GitHub does not count a 304 against the rate limit.
      if (!conditional && this.rateRemaining > 0) this.rateRemaining--;
      const common = {
        'x-ratelimit-limit': String(this.rateLimit),
        'x-ratelimit-remaining': String(this.rateRemaining),
        'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 3600),
        'x-ratelimit-used': String(this.rateLimit - this.rateRemaining),
        'x-ratelimit-resource': 'core',
        'x-github-media-type': 'github.v3; format=json',
      };
      if (conditional) {
        this.log[this.log.length - 1]!.status = 304;
        res.writeHead(304, { ...common, etag });
        res.end();
        return;
      }
      res.writeHead(status, { ...common, 'content-type': 'application/json; charset=utf-8', ...(req.method === 'GET' && status === 200 ? { etag } : {}), ...headers });
      res.end(text);
    };
    if (fault && !fault.afterApplying) return send(fault.status, null);
    if (this.mode.fail) return send(this.mode.fail, { message: 'Server Error' });
    if (this.opts.token && req.headers.authorization !== `Bearer ${this.opts.token}`) {
      return send(401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest', status: '401' });
    }
    if (this.rateRemaining <= 0) {
      return send(403, { message: `API rate limit exceeded for user ID 1.`, documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api' });
    }
    const base = `/repos/${this.owner}/${this.repo}`;
    const path = url.pathname;
    if (req.method === 'GET' && path === '/user') return send(200, this.user('trellis-bot'));
    if (req.method === 'GET' && path === base) return send(200, { id: 1, name: this.repo, full_name: `${this.owner}/${this.repo}`, owner: this.user(this.owner), html_url: `https://github.com/${this.owner}/${this.repo}`, has_issues: true });
    if (!path.startsWith(`${base}/`)) return send(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest', status: '404' });
    const rest = path.slice(base.length);
    const json = (() => {
      try {
        return body ? JSON.parse(body) : {};
      } catch {
        return undefined;
      }
    })();
    if (json === undefined) return send(400, { message: 'Problems parsing JSON' });

    if (req.method === 'GET' && rest === '/issues') {
      const state = url.searchParams.get('state') ?? 'open';
      const list = this.issues.filter((i) => state === 'all' || i.state === state).sort((a, b) => b.number - a.number);
      return this.page(url, list, send, (i) => this.issueJson(i));
    }
    if (req.method === 'POST' && rest === '/issues') {
      if (typeof json.title !== 'string' || !json.title) {
        return send(422, { message: 'Validation Failed', errors: [{ resource: 'Issue', code: 'missing_field', field: 'title' }], documentation_url: 'https://docs.github.com/rest/issues/issues#create-an-issue', status: '422' });
      }
      const n = this.seed({ title: json.title, body: json.body ?? null, user: 'trellis-bot', labels: json.labels ?? [] });
      return send(201, this.issueJson(this.issues[n - 1]!));
    }
    if (req.method === 'GET' && rest === '/issues/comments') {
      return this.page(url, this.comments, send, (c) => this.commentJson(c));
    }
    if (req.method === 'GET' && rest === '/labels') return send(200, this.labels.map((l) => ({ ...l, url: `${this.apiUrl}${base}/labels/${l.name}` })));
    const events = /^\/issues\/(\d+)\/events$/.exec(rest);
    if (req.method === 'GET' && events) {
      if (!this.issues.some((i) => i.number === Number(events[1]))) return send(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest', status: '404' });
      return this.page(url, this.events.filter((e) => e.issue === Number(events[1])), send, (e) => this.eventJson(e));
    }
    const one = /^\/issues\/(\d+)(\/comments)?$/.exec(rest);
    const issue = one ? this.issues.find((i) => i.number === Number(one[1])) : undefined;
    if (one && !issue) return send(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest', status: '404' });
    if (issue && !one![2] && req.method === 'GET') return send(200, this.issueJson(issue));
    if (issue && !one![2] && req.method === 'PATCH') {
      if (json.state !== undefined && json.state !== 'open' && json.state !== 'closed') return send(422, { message: 'Validation Failed', status: '422' });
      const at = this.tick();
      if (json.state && json.state !== issue.state) this.events.push({ id: 700 + this.events.length, issue: issue.number, event: json.state === 'closed' ? 'closed' : 'reopened', user: 'trellis-bot', created_at: at });
      if (typeof json.title === 'string' && json.title !== issue.title) {
        this.events.push({ id: 700 + this.events.length, issue: issue.number, event: 'renamed', user: 'trellis-bot', created_at: at, rename: { from: issue.title, to: json.title } });
        issue.title = json.title;
      }
      if (json.state) {
        issue.state = json.state;
        issue.closed_at = json.state === 'closed' ? at : null;
      }
      issue.updated_at = at;
      return send(200, this.issueJson(issue));
    }
    if (issue && one![2] && req.method === 'POST') {
      if (typeof json.body !== 'string' || !json.body) return send(422, { message: 'Validation Failed', status: '422' });
      this.seedComment(issue.number, json.body, 'trellis-bot');
      return send(201, this.commentJson(this.comments.at(-1)!));
    }
    return send(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest', status: '404' });
  }

  private page<T>(url: URL, all: T[], send: (status: number, json: unknown, headers?: Record<string, string>) => void, json: (t: T) => unknown): void {
    const per = Math.min(100, Number(url.searchParams.get('per_page') ?? 30));
    const page = Math.max(1, Number(url.searchParams.get('page') ?? 1));
    const last = Math.max(1, Math.ceil(all.length / per));
    const link = (p: number, rel: string) => {
      const u = new URL(url);
      u.searchParams.set('page', String(p));
      return `<${u.href}>; rel="${rel}"`;
    };
    const links = [...(page < last ? [link(page + 1, 'next'), link(last, 'last')] : []), ...(page > 1 ? [link(1, 'first'), link(page - 1, 'prev')] : [])];
    // Only the page asked for is rendered: a 1,000-issue bench asks for ten pages, not ten copies of all.
    send(200, all.slice((page - 1) * per, page * per).map(json), links.length ? { link: links.join(', ') } : {});
  }

  private user(login: string) {
    const u = `${this.apiUrl}/users/${login}`;
    return {
      login,
      id: 1000,
      node_id: 'MDQ6VXNlcjEwMDA=',
      avatar_url: 'https://avatars.githubusercontent.com/u/1000?v=4',
      gravatar_id: '',
      url: u,
      html_url: `https://github.com/${login}`,
      followers_url: `${u}/followers`,
      following_url: `${u}/following{/other_user}`,
      gists_url: `${u}/gists{/gist_id}`,
      starred_url: `${u}/starred{/owner}{/repo}`,
      subscriptions_url: `${u}/subscriptions`,
      organizations_url: `${u}/orgs`,
      repos_url: `${u}/repos`,
      events_url: `${u}/events{/privacy}`,
      received_events_url: `${u}/received_events`,
      type: 'User',
      site_admin: false,
    };
  }

  issueJson(i: StoredIssue) {
    return without(this.fullIssueJson(i), this.broken.get(i.number));
  }

  /** An issue event as GET /repos/{owner}/{repo}/issues/{n}/events answers it (recorded/github.json). */
  eventJson(e: StoredEvent) {
    const api = `${this.apiUrl}/repos/${this.owner}/${this.repo}`;
    return {
      id: e.id,
      node_id: 'MDEwOklzc3VlRXZlbnQx',
      url: `${api}/issues/events/${e.id}`,
      actor: this.user(e.user),
      event: e.event,
      commit_id: null,
      commit_url: null,
      created_at: e.created_at,
      performed_via_github_app: null,
      ...(e.rename ? { rename: e.rename } : {}),
    };
  }

  private fullIssueJson(i: StoredIssue) {
    const api = `${this.apiUrl}/repos/${this.owner}/${this.repo}`;
    const html = `https://github.com/${this.owner}/${this.repo}/${i.pull_request ? 'pull' : 'issues'}/${i.number}`;
    return {
      url: `${api}/issues/${i.number}`,
      repository_url: api,
      labels_url: `${api}/issues/${i.number}/labels{/name}`,
      comments_url: `${api}/issues/${i.number}/comments`,
      events_url: `${api}/issues/${i.number}/events`,
      html_url: html,
      id: 5000 + i.number,
      node_id: 'MDU6SXNzdWUx',
      number: i.number,
      title: i.title,
      user: this.user(i.user),
      labels: i.labels.map((name) => {
        const l = this.labels.find((x) => x.name === name) ?? { id: 9, node_id: 'x', name, color: 'ededed', default: false, description: null };
        return { ...l, url: `${api}/labels/${name}` };
      }),
      state: i.state,
      locked: false,
      assignee: null,
      assignees: [],
      milestone: null,
      comments: this.comments.filter((c) => c.issue === i.number).length,
      created_at: i.created_at,
      updated_at: i.updated_at,
      closed_at: i.closed_at,
      author_association: 'OWNER',
      active_lock_reason: null,
      ...(i.pull_request ? { pull_request: { url: `${api}/pulls/${i.number}`, html_url: html, diff_url: `${html}.diff`, patch_url: `${html}.patch` } } : {}),
      body: i.body,
      reactions: { url: `${api}/issues/${i.number}/reactions`, total_count: 0, '+1': 0, '-1': 0, laugh: 0, hooray: 0, confused: 0, heart: 0, rocket: 0, eyes: 0 },
      timeline_url: `${api}/issues/${i.number}/timeline`,
      performed_via_github_app: null,
      state_reason: i.state === 'closed' ? 'completed' : null,
    };
  }

  commentJson(c: StoredComment) {
    const api = `${this.apiUrl}/repos/${this.owner}/${this.repo}`;
    return without({
      url: `${api}/issues/comments/${c.id}`,
      html_url: `https://github.com/${this.owner}/${this.repo}/issues/${c.issue}#issuecomment-${c.id}`,
      issue_url: `${api}/issues/${c.issue}`,
      id: c.id,
      node_id: 'MDEyOklzc3VlQ29tbWVudDE=',
      user: this.user(c.user),
      created_at: c.created_at,
      updated_at: c.updated_at,
      author_association: 'OWNER',
      body: c.body,
      performed_via_github_app: null,
    }, this.brokenComments.get(c.id));
  }
}

