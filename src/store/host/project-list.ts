import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { encodeProject, readEndpointRecord, type EndpointRecord } from '../endpoint-record.js';
import { readCatalog } from './project-catalog.js';
import { projectIdentity } from './config-seam.js';
import type { Gate, HubConfig } from './hub-config.js';

/** One row of GET /projects. */
export interface ProjectRow {
  /** The slot, `encodeProject(root)`: the id in `/projects/:id` and `/p/:id`. */
  readonly id: string;
  readonly root: string;
  readonly name: string;
  readonly icon: string | null;
  readonly cataloged: boolean;
  readonly online: boolean;
  /** Why it is offline, when it is. */
  readonly reason?: string;
  readonly url: string;
  readonly gate: 'admin' | 'open' | 'password' | 'loopback';
  readonly gated: boolean;
  readonly openIssues?: number;
  readonly liveSessions?: number;
}

export interface ProjectList {
  readonly projects: readonly ProjectRow[];
  readonly catalogError?: string;
}

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

/** The gate of project `id` under `hub`: before any admin password exists, loopback clients only. */
export function gateOf(hub: HubConfig, id: string): Gate | 'loopback' {
  if (!hub.adminPassword) return 'loopback';
  return hub.gates?.[id] ?? 'admin';
}

/** How long one project's liveness probe may take: a hung backend never stalls the list. */
export const PROBE_MS = 800;

const counts = new Map<string, { etag: string; openIssues: number; liveSessions: number }>();

/** Open issues and live sessions from the backend's /api/graph, revalidated by ETag. */
async function countsOf(record: EndpointRecord): Promise<{ openIssues: number; liveSessions: number } | null> {
  const key = `${record.instanceId}@${record.url}`;
  const cached = counts.get(key);
  try {
    const res = await fetch(new URL('/api/graph', record.url), {
      headers: cached ? { 'If-None-Match': cached.etag } : {},
      signal: AbortSignal.timeout(PROBE_MS),
    });
    if (res.status === 304 && cached) return cached;
    if (!res.ok) return null;
    const graph = (await res.json()) as { nodes?: { openIssues?: { id?: string }[] }[]; sessions?: unknown[] };
    const open = new Set<string>();
    for (const n of graph.nodes ?? []) for (const i of n.openIssues ?? []) if (i.id) open.add(i.id);
    const value = { etag: res.headers.get('etag') ?? '', openIssues: open.size, liveSessions: Array.isArray(graph.sessions) ? graph.sessions.length : 0 };
    if (value.etag) counts.set(key, value);
    return value;
  } catch {
    return null;
  }
}

/** Probes one project through the one seam, readEndpointRecord. */
export async function projectRow(home: string, hub: HubConfig, p: KnownProject): Promise<ProjectRow> {
  const verdict = await readEndpointRecord(home, p.root, { timeoutMs: PROBE_MS });
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
    gated: gate !== 'open',
    ...(c ? c : {}),
  };
}

/** The reconciled list: every known project probed concurrently, each probe bounded in time. */
export async function listProjects(home: string, hub: HubConfig): Promise<ProjectList> {
  const known = knownProjects(home);
  const projects = await Promise.all(known.projects.map((p) => projectRow(home, hub, p)));
  return { projects, ...(known.catalogError ? { catalogError: known.catalogError } : {}) };
}

/** The online record of project `id`, or why there is none. No upstream is contacted for an unknown id. */
export async function onlineRecord(home: string, id: string): Promise<EndpointRecord | null> {
  const p = knownProjects(home).projects.find((x) => x.id === id);
  if (!p) return null;
  const verdict = await readEndpointRecord(home, p.root, { timeoutMs: PROBE_MS });
  return verdict.online ? verdict.record : null;
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
