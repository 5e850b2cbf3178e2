import { readdirSync, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import { basename, join } from 'node:path';
import { TrellisError } from '../../events/index.js';
import { encodeProject, readEndpointRecord, type EndpointRecord, type RecordVerdict } from './endpoint-record.js';
import { perTurn } from './per-turn.js';
import { readCatalog } from './project-catalog.js';
import { projectIdentity } from './config-seam.js';
import type { Gate, HubConfig } from './hub-config.js';
import type { ProjectList, ProjectRow } from '../../projections/project-row.js';
import { inboxOf, liveSessionCount } from '../../projections/inbox.js';
import type { SessionSummary } from '../../projections/session-list.js';

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

/** How long one project's liveness probe may take: a hung backend never stalls the list. */
export const PROBE_MS = 800;

type Counts = Pick<ProjectRow, 'openIssues' | 'liveSessions' | 'inbox'>;
const counts = new Map<string, { etag: string; value: Counts }>();

/**
 * What the row says of a running project, from its backend's /api/graph (revalidated by ETag), counted
 * the way the project's own page counts: open issues from its freshness stamp (every store, bound to a
 * node or not), live sessions by state, and the sessions that need a person.
 */
async function countsOf(record: EndpointRecord): Promise<Counts | null> {
  const key = `${record.instanceId}@${record.url}`;
  const cached = counts.get(key);
  try {
    const res = await getJson(new URL('/api/graph', record.url), cached ? { 'If-None-Match': cached.etag } : {});
    if (res.status === 304 && cached) return cached.value;
    if (res.status !== 200) return null;
    const graph = JSON.parse(res.body) as { freshness?: { open?: number }; sessions?: SessionSummary[] };
    const sessions = Array.isArray(graph.sessions) ? graph.sessions : [];
    const value: Counts = { openIssues: graph.freshness?.open ?? 0, liveSessions: liveSessionCount(sessions), inbox: inboxOf(sessions) };
    if (res.etag) counts.set(key, { etag: res.etag, value });
    return value;
  } catch {
    return null;
  }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

/** A GET on a kept-alive connection, bounded by PROBE_MS. */
function getJson(url: URL, headers: Record<string, string>): Promise<{ status: number; etag: string | undefined; body: string }> {
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

/** Probes one project through the one seam, readEndpointRecord. */
export async function projectRow(home: string, hub: HubConfig, p: KnownProject): Promise<ProjectRow> {
  const verdict = await verify(home, p.id, p.root);
  const gate = gateOf(hub, p.id);
  const c = verdict.online ? await countsOf(verdict.record) : null;
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
export async function listProjects(home: string, hub: HubConfig): Promise<ProjectList> {
  const known = knownProjects(home);
  const projects = await Promise.all(known.projects.map((p) => projectRow(home, hub, p)));
  return { projects, ...(known.catalogError ? { catalogError: known.catalogError } : {}) };
}

/** How long a verified record is trusted for proxying before its instance is asked again. */
export const VERIFIED_MS = 2_000;
const verified = new Map<string, { stamp: string; record: EndpointRecord; at: number }>();

const statStamp = (p: string) => {
  try {
    const s = statSync(p, { bigint: true, throwIfNoEntry: false });
    return s ? `${s.mtimeNs}:${s.size}:${s.ino}` : null;
  } catch {
    return null;
  }
};

/**
 * The online record of project `id` (its slot), or null: what `/p/:id` proxies to. The record must sit
 * in the slot its root encodes to, its root must be an existing directory, and readEndpointRecord must
 * find its instance live. A verdict is reused for a moment while the record file is unchanged and its
 * owner alive, so a proxied request does not cost a second round trip. No upstream is contacted for an
 * id without a record.
 */
export async function onlineRecord(home: string, id: string): Promise<EndpointRecord | null> {
  if (!/^[a-z0-9._-]+$/.test(id)) return null;
  const path = join(home, 'projects', id, 'endpoint.json');
  // The hot path of every proxied request: a fresh verdict for an unchanged record costs two syscalls,
  // shared by every request of the same event-loop turn.
  const hit = verified.get(id);
  if (hit && Date.now() - hit.at < VERIFIED_MS && perTurn(`stat:${path}`, () => statStamp(path)) === hit.stamp && perTurn(`pid:${hit.record.pid}`, () => alive(hit.record.pid))) return hit.record;
  let root: unknown;
  try {
    root = (JSON.parse(readFileSync(path, 'utf8')) as { root?: unknown }).root;
  } catch {
    return null;
  }
  if (typeof root !== 'string' || encodeProject(root) !== id || !isDir(root)) return null;
  const verdict = await verify(home, id, root);
  return verdict.online ? verdict.record : null;
}

/** Probes under way, by id and record stamp: a burst of requests for one project shares one probe. */
const probing = new Map<string, Promise<RecordVerdict>>();

/** readEndpointRecord, its online verdict reused while fresh, the record file unchanged and its owner alive. */
async function verify(home: string, id: string, root: string): Promise<RecordVerdict> {
  const stamp = statStamp(join(home, 'projects', id, 'endpoint.json'));
  if (!stamp) return { online: false, reason: 'no endpoint record' };
  const hit = verified.get(id);
  if (hit && hit.stamp === stamp && Date.now() - hit.at < VERIFIED_MS && alive(hit.record.pid)) return { online: true, record: hit.record };
  verified.delete(id);
  // A record proven before whose serve still runs: its face is not asked again (while a dead child is
  // replaced it holds connections, and a probe would time out); only a child it names is. A backend
  // that stopped answering was forgotten (forgetVerified), so it is proven afresh.
  const known = hit && alive(hit.record.pid) ? hit.record : undefined;
  const key = `${id}\0${root}\0${stamp}`;
  let probe = probing.get(key);
  if (!probe) {
    probe = readEndpointRecord(home, root, { timeoutMs: PROBE_MS, known }).finally(() => probing.delete(key));
    probing.set(key, probe);
  }
  const verdict = await probe;
  if (verdict.online) verified.set(id, { stamp, record: verdict.record, at: Date.now() });
  return verdict;
}

/** Forgets a verified record (its backend stopped answering). */
export function forgetVerified(id: string): void {
  verified.delete(id);
}

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

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
