/**
 * A local stand-in for GitLab's REST v4, the subset the GitLab driver uses: a project found by id or by
 * URL-encoded path, its issues (iid numbering, `updated_after`, `order_by`/`sort`, labels by name or with
 * details), notes (system notes among them), `state_event`, `PRIVATE-TOKEN`, GitLab's pagination headers
 * (X-Page, X-Per-Page, X-Total, X-Total-Pages, X-Next-Page, X-Prev-Page, Link) and RateLimit-* headers.
 * Objects follow the examples of GitLab's API documentation; recorded/gitlab.json holds those samples and
 * forge-shapes-all.test.ts checks these answers against them.
 */
import { linkHeader, pageOf, StandInServer, without, type Send, type StandInRequest } from './standin-server.js';

interface GlStoredIssue {
  id: number;
  iid: number;
  title: string;
  description: string | null;
  state: 'opened' | 'closed';
  author: string;
  labels: string[];
  created: number;
  updated: number;
  closed: number | null;
}

interface GlStoredNote {
  id: number;
  iid: number;
  body: string;
  author: string;
  system: boolean;
  created: number;
  updated: number;
}

/** A resource state event: who closed or reopened an issue, and when (GitLab does not record the opening). */
interface GlStoredStateEvent {
  id: number;
  iid: number;
  user: string;
  state: 'closed' | 'reopened';
  created: number;
}

const iso = (t: number) => new Date(t).toISOString();

export class GitLabForge extends StandInServer {
  readonly projectId = 42;
  readonly path = 'acme/shop';
  readonly issues: GlStoredIssue[] = [];
  readonly notes: GlStoredNote[] = [];
  readonly stateEvents: GlStoredStateEvent[] = [];
  /** Issues (by iid) answered without one field, as a GitLab that drifted would: the field's name. */
  readonly broken = new Map<number, string>();
  /** Notes (by id) answered without one field. */
  readonly brokenNotes = new Map<number, string>();
  readonly labels = [
    { id: 1, name: 'bug', color: '#d73a4a', description: "Something isn't working", text_color: '#FFFFFF' },
    { id: 2, name: 'enhancement', color: '#a2eeef', description: 'New feature or request', text_color: '#333333' },
  ];
  token: string | undefined;

  constructor(opts: { token?: string } = {}) {
    super('/api/v4');
    this.token = opts.token;
  }

  /** The web host permalinks name (what gitlab.com's web_url would say). */
  webUrl(iid: number): string {
    return `https://gitlab.com/${this.path}/-/issues/${iid}`;
  }

  seed(input: { title: string; body?: string | null; user?: string; labels?: string[]; state?: 'open' | 'closed'; at?: string }): number {
    const at = input.at ? Date.parse(input.at) : this.tick();
    const iid = this.issues.length + 1;
    this.issues.push({ id: 9000 + iid, iid, title: input.title, description: input.body ?? null, state: input.state === 'closed' ? 'closed' : 'opened', author: input.user ?? 'octocat', labels: input.labels ?? [], created: at, updated: at, closed: input.state === 'closed' ? at : null });
    return iid;
  }

  seedComment(iid: number, body: string, user = 'octocat', system = false): void {
    const at = this.tick();
    this.notes.push({ id: 500 + this.notes.length, iid, body, author: user, system, created: at, updated: at });
    const issue = this.issues.find((i) => i.iid === iid);
    if (issue) issue.updated = at; // a note touches its issue, as GitLab's does
  }

  protected override commonHeaders(): Record<string, string> {
    return { 'ratelimit-limit': '2000', 'ratelimit-observed': '1', 'ratelimit-remaining': '1999', 'ratelimit-reset': String(Math.floor(Date.now() / 1000) + 60) };
  }

  protected route(req: StandInRequest, send: Send): void {
    if (this.token !== undefined && req.headers['private-token'] !== this.token) return send(401, { message: '401 Unauthorized' });
    if (req.json === undefined) return send(400, { error: 'The provided content-type is not supported' });
    const path = req.url.pathname;
    if (req.method === 'GET' && path === '/user') return send(200, { ...this.user('trellis-bot'), email: 'bot@example.com', created_at: iso(this.clock) });
    const m = /^\/projects\/([^/]+)(\/.*)?$/.exec(path);
    const ref = m ? decodeURIComponent(m[1]!) : null;
    if (!m || (ref !== this.path && ref !== String(this.projectId))) return send(404, { message: '404 Project Not Found' });
    const rest = m[2] ?? '';
    if (req.method === 'GET' && rest === '') return send(200, { id: this.projectId, name: 'shop', path: 'shop', path_with_namespace: this.path, web_url: `https://gitlab.com/${this.path}`, default_branch: 'main', issues_enabled: true });
    if (req.method === 'GET' && rest === '/issues') return this.listIssues(req, send);
    if (req.method === 'POST' && rest === '/issues') {
      if (typeof req.json.title !== 'string' || !req.json.title) return send(400, { error: 'title is missing' });
      const iid = this.seed({ title: req.json.title, body: (req.json.description as string | undefined) ?? null, user: 'trellis-bot' });
      return send(201, this.issueJson(this.issues[iid - 1]!, true));
    }
    const states = /^\/issues\/(\d+)\/resource_state_events$/.exec(rest);
    if (states && req.method === 'GET') {
      const of = this.issues.find((i) => i.iid === Number(states[1]));
      if (!of) return send(404, { message: '404 Not found' });
      return this.paged(req.url, this.stateEvents.filter((e) => e.iid === of.iid), send, (e) => this.stateEventJson(e, of.id));
    }
    const one = /^\/issues\/(\d+)(\/notes)?$/.exec(rest);
    const issue = one ? this.issues.find((i) => i.iid === Number(one[1])) : undefined;
    if (!issue) return send(404, { message: '404 Not found' });
    if (!one![2] && req.method === 'GET') return send(200, this.issueJson(issue, true));
    if (!one![2] && req.method === 'PUT') {
      const ev = req.json.state_event;
      if (ev !== undefined && ev !== 'close' && ev !== 'reopen') return send(400, { error: 'state_event does not have a valid value' });
      issue.updated = this.tick();
      const next = ev === 'close' ? 'closed' : ev === 'reopen' ? 'opened' : issue.state;
      if (next !== issue.state) this.stateEvents.push({ id: 140 + this.stateEvents.length, iid: issue.iid, user: 'trellis-bot', state: next === 'closed' ? 'closed' : 'reopened', created: issue.updated });
      if (ev === 'close') [issue.state, issue.closed] = ['closed', issue.updated];
      if (ev === 'reopen') [issue.state, issue.closed] = ['opened', null];
      return send(200, this.issueJson(issue, true));
    }
    if (one![2] && req.method === 'GET') {
      const sort = req.url.searchParams.get('sort') ?? 'desc';
      const all = this.notes.filter((n) => n.iid === issue.iid).sort((a, b) => (sort === 'asc' ? a.created - b.created || a.id - b.id : b.created - a.created || b.id - a.id));
      return this.paged(req.url, all, send, (n) => this.noteJson(n));
    }
    if (one![2] && req.method === 'POST') {
      if (typeof req.json.body !== 'string' || !req.json.body) return send(400, { error: 'body is missing' });
      this.seedComment(issue.iid, req.json.body, 'trellis-bot');
      return send(201, this.noteJson(this.notes.at(-1)!));
    }
    return send(405, { message: '405 Method Not Allowed' });
  }

  private listIssues(req: StandInRequest, send: Send): void {
    const q = req.url.searchParams;
    const after = q.get('updated_after');
    const by = q.get('order_by') === 'updated_at' ? 'updated' : 'created';
    const sign = q.get('sort') === 'asc' ? 1 : -1;
    const state = q.get('state');
    const list = this.issues
      .filter((i) => (after ? i.updated >= Date.parse(after) : true) && (state === 'opened' || state === 'closed' ? i.state === state : true))
      .sort((a, b) => sign * (a[by] - b[by] || a.id - b.id));
    const details = q.get('with_labels_details') === 'true';
    this.paged(req.url, list, send, (i) => this.issueJson(i, details));
  }

  /** GitLab's offset pagination headers, all of them. */
  private paged<T>(url: URL, all: T[], send: Send, json: (t: T) => unknown): void {
    const { items: raw, page, per, last } = pageOf(url, all, 'per_page', 20, 100);
    const items = raw.map(json); // only the page asked for is rendered
    send(200, items, {
      'x-page': String(page),
      'x-per-page': String(per),
      'x-total': String(all.length),
      'x-total-pages': String(last),
      'x-next-page': page < last ? String(page + 1) : '',
      'x-prev-page': page > 1 ? String(page - 1) : '',
      link: linkHeader(url, this.apiUrl, page, last),
    });
  }

  private user(username: string) {
    return { id: 1000 + username.length, username, name: username, state: 'active', locked: false, avatar_url: null, web_url: `https://gitlab.com/${username}` };
  }

  /** A resource state event as GitLab's API documents it (recorded/gitlab.json). */
  stateEventJson(e: GlStoredStateEvent, issueId: number) {
    const { locked: _, ...user } = this.user(e.user);
    return { id: e.id, user, created_at: iso(e.created), resource_type: 'Issue', resource_id: issueId, source_commit: null, source_merge_request_id: null, state: e.state };
  }

  issueJson(i: GlStoredIssue, details: boolean) {
    return without(this.fullIssueJson(i, details), this.broken.get(i.iid));
  }

  private fullIssueJson(i: GlStoredIssue, details: boolean) {
    const api = `${this.apiUrl}/projects/${this.projectId}`;
    const notes = this.notes.filter((n) => n.iid === i.iid && !n.system).length;
    return {
      id: i.id,
      iid: i.iid,
      project_id: this.projectId,
      title: i.title,
      description: i.description,
      state: i.state,
      created_at: iso(i.created),
      updated_at: iso(i.updated),
      closed_at: i.closed === null ? null : iso(i.closed),
      closed_by: i.closed === null ? null : this.user('trellis-bot'),
      labels: details
        ? i.labels.map((name) => {
            const l = this.labels.find((x) => x.name === name) ?? { id: 99, name, color: '#ededed', description: null, text_color: '#333333' };
            return { ...l, description_html: l.description ?? '' };
          })
        : i.labels,
      milestone: null,
      assignees: [],
      author: this.user(i.author),
      type: 'ISSUE',
      assignee: null,
      user_notes_count: notes,
      merge_requests_count: 0,
      upvotes: 0,
      downvotes: 0,
      due_date: null,
      imported: false,
      imported_from: 'none',
      confidential: false,
      discussion_locked: null,
      issue_type: 'issue',
      web_url: this.webUrl(i.iid),
      time_stats: { time_estimate: 0, total_time_spent: 0, human_time_estimate: null, human_total_time_spent: null },
      task_completion_status: { count: 0, completed_count: 0 },
      has_tasks: false,
      _links: { self: `${api}/issues/${i.iid}`, notes: `${api}/issues/${i.iid}/notes`, award_emoji: `${api}/issues/${i.iid}/award_emoji`, project: api, closed_as_duplicate_of: null },
      references: { short: `#${i.iid}`, relative: `#${i.iid}`, full: `${this.path}#${i.iid}` },
      severity: 'UNKNOWN',
      moved_to_id: null,
      service_desk_reply_to: null,
    };
  }

  noteJson(n: GlStoredNote) {
    return without(this.fullNoteJson(n), this.brokenNotes.get(n.id));
  }

  private fullNoteJson(n: GlStoredNote) {
    return {
      id: n.id,
      type: null,
      body: n.body,
      attachment: null,
      author: this.user(n.author),
      created_at: iso(n.created),
      updated_at: iso(n.updated),
      system: n.system,
      noteable_id: 9000 + n.iid,
      noteable_type: 'Issue',
      project_id: this.projectId,
      resolvable: false,
      confidential: false,
      internal: false,
      imported: false,
      imported_from: 'none',
      noteable_iid: n.iid,
      commands_changes: {},
    };
  }
}
