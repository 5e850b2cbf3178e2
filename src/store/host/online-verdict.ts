/**
 * Whether a project's backend is online: the one verdict (spec §2.3) and the cache the gateway keeps of
 * it. readEndpointRecord decides from the record file and the live instance; OnlineVerdicts reuses a
 * verdict for a moment while the record is unchanged and its owner alive, so a proxied request or a
 * listing does not cost a round trip. The record's format, its writes and its claim are in
 * endpoint-record.ts.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { asRecord, isLoopback, readRecordJson, recordPath, RECORD_VERSION, type EndpointRecord } from './endpoint-record.js';
import { encodeProject, safeRealpath } from '../trellis-home.js';
import { perTurn } from './per-turn.js';

export type RecordVerdict =
  | { readonly online: true; readonly record: EndpointRecord }
  | { readonly online: false; readonly reason: string; readonly record?: EndpointRecord };

/**
 * The one seam that decides whether a project's backend is online (spec §2.3). A record is trusted only
 * when it has the identity shape, sits in the slot its own root encodes to, names a loopback url, and
 * the live GET /api/instance at that url answers with the same instanceId and root. A crashed serve's
 * record, a recycled port now serving something else, a record in the wrong slot: all offline, never
 * followed. `known`: a record of this slot proven live before, its serve still running; the same serve's
 * record (url, instance and pid alike) needs only its child proven.
 */
export async function readEndpointRecord(home: string, root: string, opts: { timeoutMs?: number; known?: EndpointRecord } = {}): Promise<RecordVerdict> {
  const path = recordPath(home, root);
  const raw = readRecordJson(path);
  if (raw === undefined) return { online: false, reason: 'no endpoint record' };
  const record = asRecord(raw);
  if (!record) return { online: false, reason: `${path} is not an endpoint record of version ${RECORD_VERSION}` };
  if (encodeProject(record.root) !== encodeProject(root) || safeRealpath(record.root) !== safeRealpath(root)) {
    return { online: false, reason: `the record in ${path} is for ${record.root}, not this project`, record };
  }
  const timeoutMs = opts.timeoutMs ?? 1_500;
  // The same serve as a record proven before (url, instance and pid alike, the caller knowing it still
  // runs): its face is not asked again, which could wait on a face holding connections while no child
  // serves.
  const sameServe = opts.known !== undefined && opts.known.url === record.url && opts.known.instanceId === record.instanceId && opts.known.pid === record.pid;
  const [face, child] = await Promise.all([
    sameServe ? null : answersAs(record.url, record, timeoutMs),
    record.child === undefined ? 'none' : answersAs(record.child, record, timeoutMs),
  ]);
  if (face !== null) return { online: false, reason: face, record };
  if (child === null) return { online: true, record };
  // A child that does not answer as this instance (gone in a swap, its port taken) is not followed.
  const { child: _dropped, ...withoutChild } = record;
  return { online: true, record: withoutChild };
}

/** Null when `url` is loopback and its GET /api/instance answers with the record's instance and root; else why not. */
async function answersAs(url: string, record: EndpointRecord, timeoutMs: number): Promise<string | null> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `the record's url ${url} does not parse`;
  }
  if (!isLoopback(parsed.hostname)) return `the record's url ${url} is not loopback`;
  try {
    const res = await fetch(new URL('/api/instance', parsed), { signal: AbortSignal.timeout(timeoutMs) });
    const live = (await res.json()) as { instanceId?: unknown; root?: unknown };
    if (live.instanceId !== record.instanceId) return `${url} answers as another instance`;
    if (typeof live.root !== 'string' || safeRealpath(live.root) !== safeRealpath(record.root)) return `${url} serves another root`;
    return null;
  } catch (err) {
    return `${url} does not answer (${(err as Error).message})`;
  }
}

/** How long one project's liveness probe may take: a hung backend never stalls the list or a request. */
export const PROBE_MS = 800;

/** How long a verified record is trusted for proxying before its instance is asked again. */
export const VERIFIED_MS = 2_000;

/** A file's identity (mtime, size, inode), or null when there is none: a record rewritten or removed is told from the one proven. */
export const statStamp = (p: string): string | null => {
  try {
    const s = statSync(p, { bigint: true, throwIfNoEntry: false });
    return s ? `${s.mtimeNs}:${s.size}:${s.ino}` : null;
  } catch {
    return null;
  }
};

const isDir = (p: string) => {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
};

/** Whether process `pid` runs (EPERM: it does, as another user). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The online verdicts of one home's projects, proven through readEndpointRecord and cached: owned by
 * whoever proxies or lists (the gateway's state; one CLI run), shared by the proxy and the project list.
 */
export class OnlineVerdicts {
  /** Verdicts proven online, by project id, with the record file's stamp when proven. */
  private readonly verified = new Map<string, { stamp: string; record: EndpointRecord; at: number }>();
  /** Probes under way, by id and record stamp: a burst of requests for one project shares one probe. */
  private readonly probing = new Map<string, Promise<RecordVerdict>>();

  constructor(
    /** TRELLIS_HOME: the projects' slots are under it. */
    readonly home: string,
  ) {}

  /**
   * The online record of project `id` (its slot), or null: what `/p/:id` proxies to. The record must sit
   * in the slot its root encodes to, its root must be an existing directory, and readEndpointRecord must
   * find its instance live. A verdict is reused for a moment while the record file is unchanged and its
   * owner alive, so a proxied request does not cost a second round trip. No upstream is contacted for an
   * id without a record.
   */
  async onlineRecord(id: string): Promise<EndpointRecord | null> {
    if (!/^[a-z0-9._-]+$/.test(id)) return null;
    const path = join(this.home, 'projects', id, 'endpoint.json');
    // The hot path of every proxied request: a fresh verdict for an unchanged record costs two syscalls,
    // shared by every request of the same event-loop turn.
    const hit = this.verified.get(id);
    if (hit && Date.now() - hit.at < VERIFIED_MS && perTurn(`stat:${path}`, () => statStamp(path)) === hit.stamp && perTurn(`pid:${hit.record.pid}`, () => alive(hit.record.pid))) return hit.record;
    let root: unknown;
    try {
      root = (JSON.parse(readFileSync(path, 'utf8')) as { root?: unknown }).root;
    } catch {
      return null;
    }
    if (typeof root !== 'string' || encodeProject(root) !== id || !isDir(root)) return null;
    const verdict = await this.verify(id, root);
    return verdict.online ? verdict.record : null;
  }

  /** readEndpointRecord, its online verdict reused while fresh, the record file unchanged and its owner alive. */
  async verify(id: string, root: string): Promise<RecordVerdict> {
    const stamp = statStamp(join(this.home, 'projects', id, 'endpoint.json'));
    if (!stamp) return { online: false, reason: 'no endpoint record' };
    const hit = this.verified.get(id);
    if (hit && hit.stamp === stamp && Date.now() - hit.at < VERIFIED_MS && alive(hit.record.pid)) return { online: true, record: hit.record };
    this.verified.delete(id);
    // A record proven before whose serve still runs: its face is not asked again (while a dead child is
    // replaced it holds connections, and a probe would time out); only a child it names is. A backend
    // that stopped answering was forgotten (forget), so it is proven afresh.
    const known = hit && alive(hit.record.pid) ? hit.record : undefined;
    const key = `${id}\0${root}\0${stamp}`;
    let probe = this.probing.get(key);
    if (!probe) {
      probe = readEndpointRecord(this.home, root, { timeoutMs: PROBE_MS, known }).finally(() => this.probing.delete(key));
      this.probing.set(key, probe);
    }
    const verdict = await probe;
    if (verdict.online) this.verified.set(id, { stamp, record: verdict.record, at: Date.now() });
    return verdict;
  }

  /** Forgets a verified record (its backend stopped answering). */
  forget(id: string): void {
    this.verified.delete(id);
  }
}
