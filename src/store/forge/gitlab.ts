import { type } from 'arktype';
import { TrellisError } from '../../events/index.js';
import type { Issue, IssueEvent, Label, Reply } from '../../projections/index.js';
import type { ForgeConfig } from '../project/config.js';
import { forgeId, type ForgeDriver, type ForgeEntry, type ForgeListing, type ProbeStep } from './driver.js';
import { allPages, ForgeHttp, hex, utc } from './http.js';
import { readMarker } from './marker.js';
import { checkGitlabProject } from './config-checks.js';
import { probeForge } from './probe.js';
import { named, numberAt, readAs, readEach, type ReadEach } from './reads.js';
import { FORGE_DEFAULTS } from './defaults.js';

const user = type({ username: 'string' });

/** The fields of GitLab's v4 objects this driver reads; nothing else is trusted to be there. */
export const gitlabReads = {
  issue: type({
    iid: 'number',
    title: 'string',
    description: 'string | null',
    state: 'string',
    web_url: 'string',
    author: user.or('null'),
    // with_labels_details=true: each label an object with its colors
    labels: type({ name: 'string', color: 'string', 'text_color?': 'string | null' }).array(),
    created_at: 'string.date',
    updated_at: 'string.date',
    user_notes_count: 'number',
  }),
  note: type({ id: 'number', body: 'string', author: user.or('null'), created_at: 'string.date', updated_at: 'string.date', system: 'boolean' }),
  created: type({ iid: 'number', web_url: 'string' }),
  // A resource state event: GitLab records closes and reopens (never the opening) this way since 15.4.
  stateEvent: type({ user: user.or('null'), created_at: 'string.date', state: 'string' }),
};
type GlIssue = typeof gitlabReads.issue.infer;
type GlNote = typeof gitlabReads.note.infer;

const PER_PAGE = 100;
/** Notes requests in flight at once during a pull: enough to hide latency, few enough to stay polite. */
const NOTES_IN_FLIGHT = 6;

/**
 * The GitLab driver: REST v4 at https://<host>/api/v4 or a configured API URL (self-managed), the token
 * in `PRIVATE-TOKEN` from the variable the config names (`GITLAB_TOKEN` by default). The project is its
 * numeric id or its path (`group/sub/name`, URL-encoded on the wire). The forge number is the issue's
 * `iid`, never its global `id`. A pull asks only for issues updated since the last one, in ascending
 * order of update (GitLab's default order shifts pages while issues change during a sync), and reads the
 * notes of those alone (a note touches its issue's `updated_at`); system notes are not replies.
 */
export class GitLabDriver implements ForgeDriver {
  readonly store: string;
  private readonly api: string;
  private readonly project: string;
  private readonly tokenEnv: string;
  private readonly http: ForgeHttp;
  private readonly held = new Map<number, ForgeEntry>();
  /** Each held issue's own `updated_at`, as the forge last said it: what a pull compares. */
  private readonly seen = new Map<number, string>();
  /** Per issue, what the last read of it left out (the issue itself, or some of its notes): the listing's notes. */
  private readonly notesOf = new Map<number, string[]>();
  /** The newest `updated_at` of the last complete pull; null until one completed. */
  private cursor: string | null = null;

  constructor(
    private readonly config: ForgeConfig,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.store = config.host;
    this.api = (config.apiUrl ?? FORGE_DEFAULTS.gitlab!.apiUrl(config.host)).replace(/\/+$/, '');
    checkGitlabProject(config);
    this.project = encodeURIComponent(config.repo);
    this.tokenEnv = config.tokenEnv ?? FORGE_DEFAULTS.gitlab!.tokenEnv;
    this.http = new ForgeHttp({
      store: this.store,
      api: this.api,
      env,
      headers: () => {
        const token = env[this.tokenEnv];
        return { Accept: 'application/json', ...(token ? { 'PRIVATE-TOKEN': token } : {}) };
      },
      hint: (status) =>
        status === 401
          ? `; set ${this.tokenEnv} to a GitLab token with the api scope (read_api to read only)`
          : status === 404
            ? `; check "project": "${config.repo}" in trellis.json (its id or group/name) and the token's access`
            : '',
    });
  }

  async list(): Promise<ForgeListing> {
    const stats = { requests: 0, notModifiedRequests: 0 };
    // One second back: a forge comparing whole seconds must not skip an update made in the cursor's second.
    const since = this.cursor ? `&updated_after=${encodeURIComponent(new Date(Date.parse(this.cursor) - 1000).toISOString())}` : '';
    const unreadable: ReadEach<unknown>['leftOut'][number][] = [];
    const issues = await allPages(this.http, `${this.api}/projects/${this.project}/issues?with_labels_details=true&order_by=updated_at&sort=asc&per_page=${PER_PAGE}${since}`, stats, (v) => {
      const page = readEach(gitlabReads.issue, v, this.store, 'an issue', (raw) => named('issue', numberAt(raw, 'iid')));
      unreadable.push(...page.leftOut);
      return page.items;
    });
    const changed = [...new Map(issues.map((i) => [i.iid, i])).values()].filter((i) => this.seen.get(i.iid) !== i.updated_at);
    const notes = new Map<number, GlNote[]>();
    const noteNotes = new Map<number, string[]>();
    const queue = changed.filter((i) => i.user_notes_count > 0);
    await Promise.all(
      Array.from({ length: Math.min(NOTES_IN_FLIGHT, queue.length) }, async () => {
        for (let i = queue.shift(); i; i = queue.shift()) {
          const iid = i.iid;
          const url = `${this.api}/projects/${this.project}/issues/${iid}/notes?sort=asc&order_by=created_at&per_page=${PER_PAGE}`;
          notes.set(iid, await allPages(this.http, url, stats, (v) => {
            const page = readEach(gitlabReads.note, v, this.store, 'a note', () => named('a comment on issue', iid));
            if (page.notes.length) noteNotes.set(iid, [...(noteNotes.get(iid) ?? []), ...page.notes]);
            return page.items;
          }));
        }
      }),
    );
    // Adopted only once every page and every note answered: a failed pull leaves the last one whole.
    for (const i of changed) {
      this.held.set(i.iid, this.entry(i, notes.get(i.iid) ?? []));
      this.seen.set(i.iid, i.updated_at);
      if (noteNotes.has(i.iid)) this.notesOf.set(i.iid, noteNotes.get(i.iid)!);
      else this.notesOf.delete(i.iid);
    }
    // An issue that cannot be read is left out until it can be: its note stays while it does.
    const loose: string[] = [];
    for (const { number, note } of unreadable) {
      if (number === null) {
        loose.push(note);
        continue;
      }
      this.held.delete(number);
      this.seen.delete(number);
      this.notesOf.set(number, [note]);
    }
    for (const i of issues) if (!this.cursor || utc(i.updated_at) > this.cursor) this.cursor = utc(i.updated_at);
    return { entries: [...this.held.values()], notes: [...[...this.notesOf.values()].flat(), ...loose], notModified: changed.length === 0 && unreadable.length === 0, ...stats };
  }

  async timeline(number: number): Promise<{ events: IssueEvent[]; notes: string[] }> {
    const notes: string[] = [];
    const events = await allPages(this.http, `${this.api}/projects/${this.project}/issues/${number}/resource_state_events?per_page=${PER_PAGE}`, { requests: 0 }, (v) => {
      const page = readEach(gitlabReads.stateEvent, v, this.store, 'a state event', () => named('a state event of issue', number));
      notes.push(...page.notes);
      return page.items;
    });
    // `opened` here is a reopen: GitLab records no event for the opening itself.
    const kind = (state: string): IssueEvent['type'] | null => (state === 'closed' ? 'closed' : state === 'reopened' || state === 'opened' ? 'reopened' : null);
    const out = events.flatMap((e): IssueEvent[] => {
      const type = kind(e.state);
      return type ? [{ type, by: e.user?.username ?? 'ghost', at: utc(e.created_at) }] : [];
    });
    return { events: out.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0)), notes };
  }

  saveState(): unknown {
    return { cursor: this.cursor, seen: [...this.seen], entries: [...this.held.values()], notes: [...this.notesOf] };
  }

  restoreState(state: unknown): void {
    const s = state as { cursor?: unknown; seen?: unknown; entries?: unknown };
    if (typeof s?.cursor !== 'string' || !Array.isArray(s.seen) || !Array.isArray(s.entries)) return;
    for (const [iid, updated] of s.seen as [number, string][]) this.seen.set(iid, updated);
    for (const e of s.entries as ForgeEntry[]) this.held.set(Number(e.issue.id.slice(this.store.length + 1)), e);
    if (Array.isArray((s as { notes?: unknown }).notes)) for (const [iid, notes] of (s as { notes: [number, string[]][] }).notes) this.notesOf.set(iid, notes);
    this.cursor = s.cursor;
  }

  async create(input: { title: string; body: string }): Promise<{ number: number; url: string }> {
    const res = await this.http.request('POST', `/projects/${this.project}/issues`, { title: input.title, description: input.body });
    const created = readAs(gitlabReads.created, res.json, this.store, 'a created issue');
    return { number: created.iid, url: created.web_url };
  }

  async comment(number: number, body: string): Promise<void> {
    await this.http.request('POST', `/projects/${this.project}/issues/${number}/notes`, { body });
  }

  async close(number: number): Promise<void> {
    await this.http.request('PUT', `/projects/${this.project}/issues/${number}`, { state_event: 'close' });
  }

  probe(): Promise<ProbeStep[]> {
    return probeForge(this.http, {
      store: this.store,
      api: this.api,
      tokenEnv: this.tokenEnv,
      token: this.env[this.tokenEnv],
      scopes: 'the api scope (read_api to read only)',
      userPath: '/user',
      projectPath: `/projects/${this.project}`,
      projectKey: `"project": "${this.config.repo}"`,
    });
  }

  /** Translates once, at the boundary: nothing downstream sees a GitLab field. */
  private entry(i: GlIssue, notes: GlNote[]): ForgeEntry {
    const { nodes, body } = readMarker(i.description ?? '');
    const replies = notes.filter((n) => !n.system).map((n): Reply => ({ by: n.author?.username ?? 'ghost', at: utc(n.created_at), body: n.body }));
    const issue: Issue = {
      id: forgeId(this.store, i.iid),
      store: this.store,
      concern: i.title,
      by: i.author?.username ?? 'ghost',
      status: i.state === 'opened' ? 'open' : i.state,
      nodes,
      created: utc(i.created_at),
      body,
      replies,
      evidence: [],
      labels: i.labels.map((l): Label => ({ name: l.name, ...(hex(l.color) ? { color: hex(l.color) } : {}), ...(hex(l.text_color) ? { textColor: hex(l.text_color) } : {}) })),
      url: i.web_url,
    };
    const updated = [utc(i.updated_at), ...notes.map((n) => utc(n.updated_at))].sort().at(-1)!;
    return { issue, updated };
  }

}
