/**
 * A local stand-in for Forgejo's / Gitea's /api/v1, the subset the Forgejo driver uses: a repository's
 * issues (`state`, `type`, `since`, `limit`/`page`), its comments listing (`since`), labels by id with
 * colors, `Authorization: token …`, pagination by `Link` and `X-Total-Count`, and edits answered 201 as
 * Gitea's EditIssue does. Times are written with the server's UTC offset (+02:00 here), as a Gitea
 * outside UTC writes them. Objects follow the swagger models (`Issue`, `Comment`, `Label`, `User`);
 * recorded/forgejo.json holds samples of them and forge-shapes-all.test.ts checks these answers against them.
 */
import { linkHeader, pageOf, StandInServer, without, type Send, type StandInRequest } from './standin-server.js';

interface FjStoredIssue {
  id: number;
  number: number;
  title: string;
  body: string;
  state: 'open' | 'closed';
  user: string;
  labels: number[];
  created: number;
  updated: number;
  closed: number | null;
  pull: boolean;
}

interface FjStoredComment {
  id: number;
  number: number;
  body: string;
  user: string;
  created: number;
  updated: number;
}

/** A timeline entry that is not a comment: a close, a reopen or a title change (Forgejo's comment types). */
interface FjStoredEvent {
  id: number;
  number: number;
  type: 'close' | 'reopen' | 'change_title';
  user: string;
  created: number;
  oldTitle?: string;
  newTitle?: string;
}

/** RFC 3339 at +02:00, as Go's time.Time marshals a time in that zone. */
const local = (t: number) => new Date(t + 2 * 3600_000).toISOString().replace(/\.\d{3}Z$/, '+02:00');

export class ForgejoForge extends StandInServer {
  readonly owner = 'acme';
  readonly repo = 'shop';
  readonly issues: FjStoredIssue[] = [];
  readonly comments: FjStoredComment[] = [];
  readonly events: FjStoredEvent[] = [];
  /** Issues (by number) answered without one field, as a Forgejo that drifted would: the field's name. */
  readonly broken = new Map<number, string>();
  /** Comments (by id) answered without one field. */
  readonly brokenComments = new Map<number, string>();
  readonly labels = [
    { id: 11, name: 'bug', color: 'd73a4a', description: "Something isn't working", exclusive: false, is_archived: false },
    { id: 12, name: 'enhancement', color: 'a2eeef', description: 'New feature or request', exclusive: false, is_archived: false },
  ];
  token: string | undefined;

  constructor(opts: { token?: string } = {}) {
    super('/api/v1');
    this.token = opts.token;
  }

  webUrl(n: number): string {
    return `https://codeberg.org/${this.owner}/${this.repo}/issues/${n}`;
  }

  /** Labels are named here for the tests' sake, and stored by id, as Forgejo keeps them. */
  seed(input: { title: string; body?: string | null; user?: string; labels?: string[]; state?: 'open' | 'closed'; at?: string; pullRequest?: boolean }): number {
    const at = input.at ? Date.parse(input.at) : this.tick();
    const number = this.issues.length + 1;
    const labels = (input.labels ?? []).map((name) => this.labels.find((l) => l.name === name)?.id ?? 11);
    this.issues.push({ id: 7000 + number, number, title: input.title, body: input.body ?? '', state: input.state ?? 'open', user: input.user ?? 'octocat', labels, created: at, updated: at, closed: input.state === 'closed' ? at : null, pull: input.pullRequest ?? false });
    return number;
  }

  seedComment(number: number, body: string, user = 'octocat'): void {
    const at = this.tick();
    this.comments.push({ id: 300 + this.comments.length, number, body, user, created: at, updated: at });
    const issue = this.issues.find((i) => i.number === number);
    if (issue) issue.updated = at;
  }

  protected route(req: StandInRequest, send: Send): void {
    const auth = req.headers.authorization;
    if (this.token !== undefined && auth !== `token ${this.token}`) {
      return send(401, { message: auth ? 'user does not exist [uid: 0, name: ]' : 'token is required', url: `${this.apiUrl}/swagger` });
    }
    if (req.json === undefined) return send(422, { message: 'invalid character in JSON body', url: `${this.apiUrl}/swagger` });
    const path = req.url.pathname;
    if (req.method === 'GET' && path === '/user') return send(200, this.user('trellis-bot'));
    const base = `/repos/${this.owner}/${this.repo}`;
    if (path !== base && !path.startsWith(`${base}/`)) return send(404, { errors: [], message: "The target couldn't be found.", url: `${this.apiUrl}/swagger` });
    const rest = path.slice(base.length);
    if (req.method === 'GET' && rest === '') return send(200, { id: 1, owner: this.user(this.owner), name: this.repo, full_name: `${this.owner}/${this.repo}`, html_url: `https://codeberg.org/${this.owner}/${this.repo}`, has_issues: true });
    const q = req.url.searchParams;
    const since = q.get('since') ? Date.parse(q.get('since')!) : null;
    if (req.method === 'GET' && rest === '/issues') {
      const state = q.get('state') ?? 'open';
      const type = q.get('type');
      const list = this.issues
        .filter((i) => (state === 'all' || i.state === state) && (type === 'issues' ? !i.pull : type === 'pulls' ? i.pull : true) && (since === null || i.updated >= since))
        .sort((a, b) => b.created - a.created || b.id - a.id);
      return this.paged(req.url, list, send, (i) => this.issueJson(i));
    }
    if (req.method === 'GET' && rest === '/issues/comments') {
      const list = this.comments.filter((c) => since === null || c.updated >= since).sort((a, b) => a.created - b.created || a.id - b.id);
      return this.paged(req.url, list, send, (c) => this.commentJson(c));
    }
    if (req.method === 'POST' && rest === '/issues') {
      if (typeof req.json.title !== 'string' || !req.json.title) return send(422, { message: '[Title]: Required', url: `${this.apiUrl}/swagger` });
      const n = this.seed({ title: req.json.title, body: (req.json.body as string | undefined) ?? '', user: 'trellis-bot' });
      return send(201, this.issueJson(this.issues[n - 1]!));
    }
    const timeline = /^\/issues\/(\d+)\/timeline$/.exec(rest);
    if (timeline && req.method === 'GET') {
      const n = Number(timeline[1]);
      if (!this.issues.some((i) => i.number === n)) return send(404, { errors: [], message: "The target couldn't be found.", url: `${this.apiUrl}/swagger` });
      // Forgejo's timeline holds the comments too, each as a TimelineComment of type "comment".
      const items = [...this.comments.filter((c) => c.number === n).map((c) => ({ id: c.id, number: n, type: 'comment' as const, user: c.user, created: c.created, body: c.body })), ...this.events.filter((e) => e.number === n)].sort((a, b) => a.created - b.created || a.id - b.id);
      return this.paged(req.url, items, send, (e) => this.timelineJson(e));
    }
    const one = /^\/issues\/(\d+)(\/comments)?$/.exec(rest);
    const issue = one ? this.issues.find((i) => i.number === Number(one[1])) : undefined;
    if (!issue) return send(404, { errors: [], message: "The target couldn't be found.", url: `${this.apiUrl}/swagger` });
    if (!one![2] && req.method === 'GET') return send(200, this.issueJson(issue));
    if (!one![2] && req.method === 'PATCH') {
      const state = req.json.state;
      if (state !== undefined && state !== 'open' && state !== 'closed') return send(422, { message: 'invalid state', url: `${this.apiUrl}/swagger` });
      issue.updated = this.tick();
      if (state && state !== issue.state) this.events.push({ id: 900 + this.events.length, number: issue.number, type: state === 'closed' ? 'close' : 'reopen', user: 'trellis-bot', created: issue.updated });
      if (typeof req.json.title === 'string' && req.json.title !== issue.title) {
        this.events.push({ id: 900 + this.events.length, number: issue.number, type: 'change_title', user: 'trellis-bot', created: issue.updated, oldTitle: issue.title, newTitle: req.json.title });
        issue.title = req.json.title;
      }
      if (state) [issue.state, issue.closed] = [state, state === 'closed' ? issue.updated : null];
      return send(201, this.issueJson(issue));
    }
    if (one![2] && req.method === 'POST') {
      if (typeof req.json.body !== 'string' || !req.json.body) return send(422, { message: '[Body]: Required', url: `${this.apiUrl}/swagger` });
      this.seedComment(issue.number, req.json.body, 'trellis-bot');
      return send(201, this.commentJson(this.comments.at(-1)!));
    }
    return send(405, { message: 'Method Not Allowed', url: `${this.apiUrl}/swagger` });
  }

  private paged<T>(url: URL, all: T[], send: Send, json: (t: T) => unknown): void {
    const { items: raw, page, last } = pageOf(url, all, 'limit', 30, 50);
    const items = raw.map(json); // only the page asked for is rendered
    const link = linkHeader(url, this.apiUrl, page, last);
    send(200, items, { 'x-total-count': String(all.length), ...(link ? { link } : {}) });
  }

  private user(login: string) {
    return {
      id: 100 + login.length,
      login,
      login_name: '',
      source_id: 0,
      full_name: '',
      email: `${login}@noreply.codeberg.org`,
      avatar_url: `https://codeberg.org/avatars/${login}`,
      html_url: `https://codeberg.org/${login}`,
      language: '',
      is_admin: false,
      last_login: '0001-01-01T00:00:00Z',
      created: local(Date.UTC(2025, 0, 1)),
      restricted: false,
      active: false,
      prohibit_login: false,
      location: '',
      website: '',
      description: '',
      visibility: 'public',
      followers_count: 0,
      following_count: 0,
      starred_repos_count: 0,
      username: login,
    };
  }

  /** A TimelineComment as GET …/issues/{index}/timeline answers it (recorded/forgejo.json). */
  timelineJson(e: { id: number; number: number; type: string; user: string; created: number; body?: string; oldTitle?: string; newTitle?: string }) {
    return {
      id: e.id,
      type: e.type,
      html_url: `${this.webUrl(e.number)}#issuecomment-${e.id}`,
      pull_request_url: '',
      issue_url: this.webUrl(e.number),
      user: this.user(e.user),
      body: e.body ?? '',
      created_at: local(e.created),
      updated_at: local(e.created),
      old_project_id: 0,
      project_id: 0,
      old_milestone: null,
      milestone: null,
      tracked_time: null,
      old_title: e.oldTitle ?? '',
      new_title: e.newTitle ?? '',
      old_ref: '',
      new_ref: '',
      ref_issue: null,
      ref_comment: null,
      ref_action: '',
      ref_commit_sha: '',
      review_id: 0,
      label: null,
      assignee: null,
      assignee_team: null,
      removed_assignee: false,
      resolve_doer: null,
      dependent_issue: null,
    };
  }

  issueJson(i: FjStoredIssue) {
    return without(this.fullIssueJson(i), this.broken.get(i.number));
  }

  private fullIssueJson(i: FjStoredIssue) {
    const api = `${this.apiUrl}/repos/${this.owner}/${this.repo}`;
    return {
      id: i.id,
      url: `${api}/issues/${i.number}`,
      html_url: this.webUrl(i.number),
      number: i.number,
      user: this.user(i.user),
      original_author: '',
      original_author_id: 0,
      title: i.title,
      body: i.body,
      ref: '',
      assets: [],
      labels: i.labels.map((id) => ({ ...this.labels.find((l) => l.id === id)!, url: `${api}/labels/${id}` })),
      milestone: null,
      assignee: null,
      assignees: null,
      state: i.state,
      is_locked: false,
      comments: this.comments.filter((c) => c.number === i.number).length,
      created_at: local(i.created),
      updated_at: local(i.updated),
      closed_at: i.closed === null ? null : local(i.closed),
      due_date: null,
      pull_request: i.pull ? { merged: false, merged_at: null, draft: false, html_url: this.webUrl(i.number).replace('/issues/', '/pulls/') } : null,
      repository: { id: 1, name: this.repo, owner: this.owner, full_name: `${this.owner}/${this.repo}` },
      pin_order: 0,
    };
  }

  commentJson(c: FjStoredComment) {
    return without(this.fullCommentJson(c), this.brokenComments.get(c.id));
  }

  private fullCommentJson(c: FjStoredComment) {
    return {
      id: c.id,
      html_url: `${this.webUrl(c.number)}#issuecomment-${c.id}`,
      pull_request_url: '',
      issue_url: this.webUrl(c.number),
      user: this.user(c.user),
      original_author: '',
      original_author_id: 0,
      body: c.body,
      assets: [],
      created_at: local(c.created),
      updated_at: local(c.updated),
    };
  }
}
