import { readdirSync, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import { basename, join } from 'node:path';
import { TrellisError } from '../../events/index.js';
import { type EndpointRecord } from './endpoint-record.js';
import { encodeProject } from '../trellis-home.js';
import { alive, PROBE_MS, type OnlineVerdicts } from './online-verdict.js';
import { readCatalog } from './project-catalog.js';
import { projectIdentity } from './config-seam.js';
import type { Gate, HubConfig } from './hub-config.js';
import type { ProjectList, ProjectRow } from '../../projections/project-row.js';
import { inboxOf, liveSessionCount } from '../../projections/inbox.js';
import type { SessionSummary } from '../../projections/session-list.js';
import type { ProjectSpend } from '../../projections/spend-periods.js';

export type { ProjectList, ProjectRow } from '../../projections/project-row.js';

/** A known project before probing: cataloged, or claimed by an endpoint record in its slot. */
export interface KnownProject {
  readonly id: string;
  readonly root: string;
  readonly cataloged: boolean;
}

const isDir = (p: string) => {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
};

/** Roots named by endpoint records under `<home>/projects/<slot>/endpoint.json`. */
function recordRoots(home: string): string[] {
  let slots: string[];
  try {
    slots = readdirSync(join(home, 'projects'));
  } catch {
    return [];
  }
  return slots.flatMap((slot) => {
    try {
      const r = JSON.parse(readFileSync(join(home, 'projects', slot, 'endpoint.json'), 'utf8')) as { root?: unknown };
      return typeof r.root === 'string' ? [r.root] : [];
    } catch {
      return [];
    }
  });
}

/** Every cataloged or record-claimed project whose root is an existing directory, by id. */
export function knownProjects(home: string): { projects: KnownProject[]; catalogError?: string } {
  const catalog = readCatalog(home);
  const byId = new Map<string, KnownProject>();
  for (const e of catalog.entries) if (isDir(e.root)) byId.set(encodeProject(e.root), { id: encodeProject(e.root), root: e.root, cataloged: true });
  for (const root of recordRoots(home)) {
    const id = encodeProject(root);
    if (!byId.has(id) && isDir(root)) byId.set(id, { id, root, cataloged: false });
  }
  const projects = [...byId.values()].sort((a, b) => (a.root < b.root ? -1 : a.root > b.root ? 1 : 0));
  return { projects, ...(catalog.error ? { catalogError: catalog.error } : {}) };
}

/** The known project `id` (cataloged or served); NOT_FOUND otherwise. */
export function findProject(home: string, id: string): KnownProject {
  const p = knownProjects(home).projects.find((x) => x.id === id);
  if (!p) throw new TrellisError('NOT_FOUND', `no project ${id} (neither cataloged nor served)`);
  return p;
}

/** The gate of project `id` under `hub`: before any admin password exists, loopback clients only. */
export function gateOf(hub: HubConfig, id: string): Gate | 'loopback' {
  if (!hub.adminPassword) return 'loopback';
  return hub.gates?.[id] ?? 'admin';
}

type Counts = Pick<ProjectRow, 'openIssues' | 'liveSessions' | 'inbox' | 'spend'>;

/** A GET on a kept-alive connection of `agent`, bounded by PROBE_MS. */
function getJson(agent: http.Agent, url: URL, headers: Record<string, string>): Promise<{ status: number; etag: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers, agent, timeout: PROBE_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, etag: res.headers.etag, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
  });
}

/**
 * The host's project list and what it keeps between lists, owned by whoever lists (the gateway's state;
 * one CLI run): the online verdicts it shares with the proxy, and each running project's counts with the
 * kept-alive connections they are read over.
 */
export class ProjectLister {
  /** Connections to the running projects' backends, kept alive between lists (idle ones hold no process open). */
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  /** The counts of each running project (by instance and url), with the ETag they were read at. */
  private readonly counts = new Map<string, { etag: string; day: string; value: Counts }>();

  constructor(readonly verdicts: OnlineVerdicts) {}

  /** Probes one project through the one seam, its online verdict (online-verdict.ts). */
  async projectRow(hub: HubConfig, p: KnownProject): Promise<ProjectRow> {
    const verdict = await this.verdicts.verify(p.id, p.root);
    const gate = gateOf(hub, p.id);
    const c = verdict.online ? await this.countsOf(verdict.record) : null;
    return {
      id: p.id,
      root: p.root,
      ...projectIdentity(p.root, basename(p.root)),
      cataloged: p.cataloged,
      online: verdict.online,
      ...(verdict.online ? {} : { reason: verdict.reason }),
      url: `/p/${p.id}/`,
      gate: typeof gate === 'object' ? 'password' : gate,
      gated: gate === 'admin' || typeof gate === 'object',
      ...(c ? c : {}),
    };
  }

  /** The reconciled list: every known project probed concurrently, each probe bounded in time. */
  async listProjects(hub: HubConfig): Promise<ProjectList> {
    const known = knownProjects(this.verdicts.home);
    const projects = await Promise.all(known.projects.map((p) => this.projectRow(hub, p)));
    return { projects, ...(known.catalogError ? { catalogError: known.catalogError } : {}) };
  }

  /** Ends the kept-alive connections (the gateway closed). */
  close(): void {
    this.agent.destroy();
  }

  /**
   * What the row says of a running project, from its backend's /api/graph (revalidated by ETag), counted
   * the way the project's own page counts: open issues from its freshness stamp (every store, bound to a
   * node or not), live sessions by state, and the sessions that need a person.
   */
  private async countsOf(record: EndpointRecord): Promise<Counts | null> {
    const key = `${record.instanceId}@${record.url}`;
    const cached = this.counts.get(key);
    // "Today" and "this week" move at midnight (UTC) with no change of the board: read the spend again then.
    const day = new Date().toISOString().slice(0, 10);
    try {
      const res = await getJson(this.agent, new URL('/api/graph', record.url), cached ? { 'If-None-Match': cached.etag } : {});
      if (res.status === 304 && cached && cached.day === day) return cached.value;
      let value: Counts;
      if (res.status === 304 && cached) value = cached.value;
      else if (res.status !== 200) return null;
      else {
        const graph = JSON.parse(res.body) as { freshness?: { open?: number }; sessions?: SessionSummary[] };
        const sessions = Array.isArray(graph.sessions) ? graph.sessions : [];
        value = { openIssues: graph.freshness?.open ?? 0, liveSessions: liveSessionCount(sessions), inbox: inboxOf(sessions) };
      }
      // The spend only moves with a session's usage, which moves the board (and its ETag) too.
      const spend = await this.spendOf(record);
      value = { ...withoutSpend(value), ...(spend ? { spend } : {}) };
      const etag = res.status === 304 ? cached?.etag : res.etag;
      if (etag) this.counts.set(key, { etag, day, value });
      return value;
    } catch {
      return null;
    }
  }

  /**
   * The project's spend today and this week, from its backend's GET /api/cost (a read-scope route: what any
   * login of the project's page may see), or null when it does not answer one (an older backend).
   */
  private async spendOf(record: EndpointRecord): Promise<ProjectRow['spend'] | null> {
    try {
      const res = await getJson(this.agent, new URL('/api/cost?by=day&since=week', record.url), {});
      if (res.status !== 200) return null;
      const spend = (JSON.parse(res.body) as { spend?: ProjectSpend }).spend;
      return spend?.today && spend.week ? { today: spend.today, week: spend.week, budgetUsdPerDay: spend.budgetUsdPerDay ?? null } : null;
    } catch {
      return null;
    }
  }
}

const withoutSpend = ({ spend: _s, ...rest }: Counts): Counts => rest;

/**
 * A cheap fingerprint of everything the list depends on (catalog, records, the record owners' liveness,
 * each config's stat): the stream recomputes the list only when it changes.
 */
export function listFingerprint(home: string): string {
  const stat = (p: string) => {
    try {
      const s = statSync(p, { bigint: true });
      return `${s.mtimeNs}:${s.size}:${s.ino}`;
    } catch {
      return '-';
    }
  };
  const parts = [stat(join(home, 'projects.json')), stat(join(home, 'hub.json'))];
  let slots: string[] = [];
  try {
    slots = readdirSync(join(home, 'projects')).sort();
  } catch {}
  for (const slot of slots) {
    const rec = join(home, 'projects', slot, 'endpoint.json');
    parts.push(`${slot}=${stat(rec)}`);
    try {
      const pid = (JSON.parse(readFileSync(rec, 'utf8')) as { pid?: unknown }).pid;
      if (typeof pid === 'number') parts.push(alive(pid) ? 'up' : 'down');
    } catch {}
  }
  for (const p of knownProjects(home).projects) parts.push(`${p.id}:${stat(join(p.root, 'trellis.json'))}`);
  return parts.join('|');
}
