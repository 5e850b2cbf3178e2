import { type } from 'arktype';
import { TrellisError } from '../../events/index.js';
import type { Issue, IssueEvent, Label, Reply } from '../../projections/index.js';
import type { ForgeConfig } from '../project/config.js';
import { forgeId, type ForgeDriver, type ForgeEntry, type ForgeListing, type ProbeStep } from './driver.js';
import { allPages, ForgeHttp, hex, utc } from './http.js';
import { readMarker } from './marker.js';
import { checkOwnerName } from './config-checks.js';
import { probeForge } from './probe.js';
import { issueOfUrl, named, numberAt, readAs, readEach } from './reads.js';
import { FORGE_DEFAULTS } from './defaults.js';

const user = type({ login: 'string' });

/** The fields of Forgejo's / Gitea's /api/v1 objects (their swagger `Issue`, `Comment`, `Label`) this driver reads. */
export const forgejoReads = {
  issue: type({
    number: 'number',
    title: 'string',
    body: 'string',
    state: 'string',
    html_url: 'string',
    user: user.or('null'),
    labels: type({ id: 'number', name: 'string', color: 'string' }).array().or('null'),
    created_at: 'string.date',
    updated_at: 'string.date',
  }),
  comment: type({ id: 'number', issue_url: 'string', body: 'string', user: user.or('null'), created_at: 'string.date', updated_at: 'string.date' }),
  created: type({ number: 'number', html_url: 'string' }),
  // A TimelineComment of GET …/issues/{index}/timeline: close, reopen and change_title among its types.
  timelineEvent: type({ type: 'string', user: user.or('null'), created_at: 'string.date' }),
};

/** Forgejo's timeline types that are the Issue's lifecycle; comments are replies, the rest not the Issue's. */
const LIFECYCLE: Record<string, IssueEvent['type']> = { close: 'closed', reopen: 'reopened', change_title: 'edited' };
type FjIssue = typeof forgejoReads.issue.infer;
type FjComment = typeof forgejoReads.comment.infer;

/** Forgejo's and Gitea's default ceiling on a page ([api] MAX_RESPONSE_ITEMS). */
const LIMIT = 50;

/**
 * The Forgejo / Gitea driver (Codeberg, self-hosted): /api/v1 at https://<host>/api/v1 or a configured
 * API URL, the token as `Authorization: token …` from the variable the config names (`FORGEJO_TOKEN` by
 * default). A pull asks for issues and for the repository's comments `since` the last one, each its own
 * cursor (a comment need not touch its issue), following `Link` (or `X-Total-Count`) to the last page.
 * Pull requests are not issues (`type=issues`).
 */
export class ForgejoDriver implements ForgeDriver {
  readonly store: string;
  private readonly api: string;
  private readonly tokenEnv: string;
  private readonly http: ForgeHttp;
  private readonly issues = new Map<number, FjIssue>();
  private readonly comments = new Map<number, Map<number, FjComment>>();
  private readonly held = new Map<number, ForgeEntry>();
  /** Issues (by number) and comments (by id) the last read of them left out: the listing's notes. */
  private readonly issueNotes = new Map<number, string>();
  private readonly commentNotes = new Map<number, string>();
  private issueCursor: string | null = null;
  private commentCursor: string | null = null;

  constructor(
    private readonly config: ForgeConfig,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.store = config.host;
    this.api = (config.apiUrl ?? FORGE_DEFAULTS.forgejo!.apiUrl(config.host)).replace(/\/+$/, '');
    checkOwnerName(config);
    this.tokenEnv = config.tokenEnv ?? FORGE_DEFAULTS.forgejo!.tokenEnv;
    this.http = new ForgeHttp({
      store: this.store,
      api: this.api,
      env,
      headers: () => {
        const token = env[this.tokenEnv];
        return { Accept: 'application/json', ...(token ? { Authorization: `token ${token}` } : {}) };
      },
      hint: (status) =>
        status === 401
          ? `; set ${this.tokenEnv} to an access token with the issue scope (write:issue; read:issue to read only) and read:repository`
          : status === 404
            ? `; check "repo": "${config.repo}" in trellis.json and the token's access`
            : '',
    });
  }

  async list(): Promise<ForgeListing> {
    const stats = { requests: 0, notModifiedRequests: 0 };
    const repo = `/repos/${this.config.repo}`;
    const loose: string[] = [];
    const leftIssues: { number: number; note: string }[] = [];
    const leftComments: { id: number; issue: number | null; note: string }[] = [];
    const issues = await allPages(this.http, `${this.api}${repo}/issues?state=all&type=issues&limit=${LIMIT}${since(this.issueCursor)}`, stats, (v) => {
      const page = readEach(forgejoReads.issue, v, this.store, 'an issue', (raw) => named('issue', numberAt(raw, 'number')));
      for (const l of page.leftOut) (l.number === null ? loose.push(l.note) : leftIssues.push({ number: l.number, note: l.note }));
      return page.items;
    });
    const comments = await allPages(this.http, `${this.api}${repo}/issues/comments?limit=${LIMIT}${since(this.commentCursor)}`, stats, (v) => {
      const page = readEach(forgejoReads.comment, v, this.store, 'a comment', (raw) => named('a comment on issue', issueOfUrl(raw.issue_url)));
      for (const l of page.leftOut) {
        const id = numberAt(l.raw, 'id');
        if (id === null) loose.push(l.note);
        else leftComments.push({ id, issue: l.number, note: l.note });
      }
      return page.items;
    });
    // Adopted only once both listings answered to their last page: a failed pull leaves the last one whole.
    const touched = new Set<number>();
    for (const i of issues) {
      this.issueNotes.delete(i.number);
      if (this.issues.get(i.number)?.updated_at === i.updated_at && this.held.has(i.number)) continue;
      this.issues.set(i.number, slimIssue(i));
      touched.add(i.number);
    }
    // An issue or comment that cannot be read is left out until it can be: its note stays while it does.
    for (const { number, note } of leftIssues) {
      this.issues.delete(number);
      this.held.delete(number);
      this.issueNotes.set(number, note);
    }
    for (const c of comments) {
      this.commentNotes.delete(c.id);
      const n = issueOfUrl(c.issue_url);
      if (!n) continue; // a pull request's comment
      const of = this.comments.get(n) ?? new Map<number, FjComment>();
      if (of.get(c.id)?.updated_at === c.updated_at) continue;
      of.set(c.id, slimComment(c));
      this.comments.set(n, of);
      touched.add(n);
    }
    for (const { id, issue, note } of leftComments) {
      this.commentNotes.set(id, note);
      if (issue !== null && this.comments.get(issue)?.delete(id)) touched.add(issue);
    }
    for (const n of touched) {
      const i = this.issues.get(n);
      if (i) this.held.set(n, this.entry(i, [...(this.comments.get(n)?.values() ?? [])]));
    }
    this.issueCursor = latest(this.issueCursor, issues);
    this.commentCursor = latest(this.commentCursor, comments);
    const notes = [...this.issueNotes.values(), ...this.commentNotes.values(), ...loose];
    return { entries: [...this.held.values()], notes, notModified: touched.size === 0 && leftIssues.length === 0, ...stats };
  }

  async timeline(number: number): Promise<{ events: IssueEvent[]; notes: string[] }> {
    const notes: string[] = [];
    const items = await allPages(this.http, `${this.api}/repos/${this.config.repo}/issues/${number}/timeline?limit=${LIMIT}`, { requests: 0 }, (v) => {
      const page = readEach(forgejoReads.timelineEvent, v, this.store, 'a timeline entry', () => named('a timeline entry of issue', number));
      notes.push(...page.notes);
      return page.items;
    });
    const events = items.flatMap((e): IssueEvent[] => (LIFECYCLE[e.type] ? [{ type: LIFECYCLE[e.type]!, by: e.user?.login ?? 'ghost', at: utc(e.created_at) }] : []));
    return { events: events.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0)), notes };
  }

  saveState(): unknown {
    return {
      issueCursor: this.issueCursor,
      commentCursor: this.commentCursor,
      issues: [...this.issues.values()],
      comments: [...this.comments.values()].flatMap((of) => [...of.values()]),
      issueNotes: [...this.issueNotes],
      commentNotes: [...this.commentNotes],
    };
  }

  restoreState(state: unknown): void {
    const s = state as { issueCursor?: unknown; commentCursor?: unknown; issues?: unknown; comments?: unknown };
    if (typeof s?.issueCursor !== 'string' || !Array.isArray(s.issues) || !Array.isArray(s.comments)) return;
    for (const i of s.issues as FjIssue[]) this.issues.set(i.number, i);
    for (const c of s.comments as FjComment[]) {
      const n = Number(/\/issues\/(\d+)$/.exec(c.issue_url)?.[1]);
      this.comments.set(n, (this.comments.get(n) ?? new Map<number, FjComment>()).set(c.id, c));
    }
    for (const [n, i] of this.issues) this.held.set(n, this.entry(i, [...(this.comments.get(n)?.values() ?? [])]));
    const saved = state as { issueNotes?: unknown; commentNotes?: unknown };
    if (Array.isArray(saved.issueNotes)) for (const [n, note] of saved.issueNotes as [number, string][]) this.issueNotes.set(n, note);
    if (Array.isArray(saved.commentNotes)) for (const [id, note] of saved.commentNotes as [number, string][]) this.commentNotes.set(id, note);
    this.issueCursor = s.issueCursor;
    this.commentCursor = typeof s.commentCursor === 'string' ? s.commentCursor : null;
  }

  async create(input: { title: string; body: string }): Promise<{ number: number; url: string }> {
    const res = await this.http.request('POST', `/repos/${this.config.repo}/issues`, { title: input.title, body: input.body });
    const created = readAs(forgejoReads.created, res.json, this.store, 'a created issue');
    return { number: created.number, url: created.html_url };
  }

  async comment(number: number, body: string): Promise<void> {
    await this.http.request('POST', `/repos/${this.config.repo}/issues/${number}/comments`, { body });
  }

  async close(number: number): Promise<void> {
    await this.http.request('PATCH', `/repos/${this.config.repo}/issues/${number}`, { state: 'closed' });
  }

  probe(): Promise<ProbeStep[]> {
    return probeForge(this.http, {
      store: this.store,
      api: this.api,
      tokenEnv: this.tokenEnv,
      token: this.env[this.tokenEnv],
      scopes: 'the write:issue and read:repository scopes',
      userPath: '/user',
      projectPath: `/repos/${this.config.repo}`,
      projectKey: `"repo": "${this.config.repo}"`,
    });
  }

  /** Translates once, at the boundary: nothing downstream sees a Forgejo field. */
  private entry(i: FjIssue, comments: FjComment[]): ForgeEntry {
    const { nodes, body } = readMarker(i.body);
    comments.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id - b.id));
    const replies = comments.map((c): Reply => ({ by: c.user?.login ?? 'ghost', at: utc(c.created_at), body: c.body }));
    const issue: Issue = {
      id: forgeId(this.store, i.number),
      store: this.store,
      concern: i.title,
      by: i.user?.login ?? 'ghost',
      status: i.state,
      nodes,
      created: utc(i.created_at),
      body,
      replies,
      evidence: [],
      labels: (i.labels ?? []).map((l): Label => ({ name: l.name, ...(hex(l.color) ? { color: hex(l.color) } : {}) })),
      url: i.html_url,
    };
    const updated = [utc(i.updated_at), ...comments.map((c) => utc(c.updated_at))].sort().at(-1)!;
    return { issue, updated };
  }

}

/** Only the fields read are kept (and saved): an issue's user, labels and repository objects are not. */
const slimIssue = (i: FjIssue): FjIssue => ({
  number: i.number,
  title: i.title,
  body: i.body,
  state: i.state,
  html_url: i.html_url,
  user: i.user && { login: i.user.login },
  labels: i.labels && i.labels.map((l) => ({ id: l.id, name: l.name, color: l.color })),
  created_at: i.created_at,
  updated_at: i.updated_at,
});

const slimComment = (c: FjComment): FjComment => ({ id: c.id, issue_url: c.issue_url, body: c.body, user: c.user && { login: c.user.login }, created_at: c.created_at, updated_at: c.updated_at });

/** `&since=` one second before the cursor: a forge comparing whole seconds must not skip that second. */
const since = (cursor: string | null) => (cursor ? `&since=${encodeURIComponent(new Date(Date.parse(cursor) - 1000).toISOString())}` : '');

const latest = (cursor: string | null, items: readonly { updated_at: string }[]) =>
  items.reduce<string | null>((max, i) => (max === null || utc(i.updated_at) > max ? utc(i.updated_at) : max), cursor);
