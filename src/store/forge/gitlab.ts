import type { Issue, Label, Reply } from '../../projections/index.js';
import type { ForgeConfig } from '../project/config.js';
import { forgeId, type ForgeDriver, type ForgeEntry, type ForgeListing, type ProbeStep } from './driver.js';
import { allPages, ForgeHttp, hex, utc } from './http.js';
import { readMarker } from './marker.js';
import { checkGitlabProject } from './config-checks.js';
import { probeForge } from './probe.js';
import type { GlIssue, GlNote } from './gitlab-reads.js';

/** The schemas this driver reads with, loaded by its first pull or create (see gitlab-reads.ts). */
const reads = () => import('./gitlab-reads.js');

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
  /** The newest `updated_at` of the last complete pull; null until one completed. */
  private cursor: string | null = null;

  constructor(
    private readonly config: ForgeConfig,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.store = config.host;
    this.api = (config.apiUrl ?? `https://${config.host}/api/v4`).replace(/\/+$/, '');
    checkGitlabProject(config);
    this.project = encodeURIComponent(config.repo);
    this.tokenEnv = config.tokenEnv ?? 'GITLAB_TOKEN';
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
    const { gitlabReads, readList } = await reads();
    const stats = { requests: 0, notModifiedRequests: 0 };
    // One second back: a forge comparing whole seconds must not skip an update made in the cursor's second.
    const since = this.cursor ? `&updated_after=${encodeURIComponent(new Date(Date.parse(this.cursor) - 1000).toISOString())}` : '';
    const issues = await allPages(this.http, `${this.api}/projects/${this.project}/issues?with_labels_details=true&order_by=updated_at&sort=asc&per_page=${PER_PAGE}${since}`, stats, (v) =>
      readList(gitlabReads.issue, v, this.store, 'an issue'),
    );
    const changed = [...new Map(issues.map((i) => [i.iid, i])).values()].filter((i) => this.seen.get(i.iid) !== i.updated_at);
    const notes = new Map<number, GlNote[]>();
    const queue = changed.filter((i) => i.user_notes_count > 0);
    await Promise.all(
      Array.from({ length: Math.min(NOTES_IN_FLIGHT, queue.length) }, async () => {
        for (let i = queue.shift(); i; i = queue.shift()) {
          notes.set(i.iid, await allPages(this.http, `${this.api}/projects/${this.project}/issues/${i.iid}/notes?sort=asc&order_by=created_at&per_page=${PER_PAGE}`, stats, (v) => readList(gitlabReads.note, v, this.store, 'a note')));
        }
      }),
    );
    // Adopted only once every page and every note answered: a failed pull leaves the last one whole.
    for (const i of changed) {
      this.held.set(i.iid, this.entry(i, notes.get(i.iid) ?? []));
      this.seen.set(i.iid, i.updated_at);
    }
    for (const i of issues) if (!this.cursor || utc(i.updated_at) > this.cursor) this.cursor = utc(i.updated_at);
    return { entries: [...this.held.values()], notModified: changed.length === 0, ...stats };
  }

  saveState(): unknown {
    return { cursor: this.cursor, seen: [...this.seen], entries: [...this.held.values()] };
  }

  restoreState(state: unknown): void {
    const s = state as { cursor?: unknown; seen?: unknown; entries?: unknown };
    if (typeof s?.cursor !== 'string' || !Array.isArray(s.seen) || !Array.isArray(s.entries)) return;
    for (const [iid, updated] of s.seen as [number, string][]) this.seen.set(iid, updated);
    for (const e of s.entries as ForgeEntry[]) this.held.set(Number(e.issue.id.slice(this.store.length + 1)), e);
    this.cursor = s.cursor;
  }

  async create(input: { title: string; body: string }): Promise<{ number: number; url: string }> {
    const res = await this.http.request('POST', `/projects/${this.project}/issues`, { title: input.title, description: input.body });
    const { gitlabReads, readAs } = await reads();
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
