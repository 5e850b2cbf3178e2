import { closeSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeAtomic } from '../write-atomic.js';
import { TrellisError } from '../../events/errors.js';
import { encodeProject, safeRealpath } from '../trellis-home.js';

/**
 * Endpoint records: how a running `trellis serve` is found (spec §2.3). One per project slot,
 * `<TRELLIS_HOME>/projects/<slot>/endpoint.json`, `slot = encodeProject(root)`. Whether the serve a
 * record names is online is decided in online-verdict.ts.
 *
 * Record format versions (`version`):
 *   1 — initial: { version, url, pid, instanceId, root, identity: { toplevel, gitCommonDir, worktree }, startedAt },
 *       and since the gateway talks to the serving child directly, an optional `child` (readers that do not
 *       know it ignore it, so the version stays).
 */
export const RECORD_VERSION = 1;

export interface EndpointIdentity {
  /** The served working tree's toplevel (a linked worktree's own, never the main checkout's). */
  readonly toplevel: string;
  readonly gitCommonDir: string;
  /** True for a linked worktree. */
  readonly worktree: boolean;
}

export interface EndpointRecord {
  readonly version: typeof RECORD_VERSION;
  readonly url: string;
  readonly pid: number;
  readonly instanceId: string;
  readonly root: string;
  readonly identity: EndpointIdentity;
  readonly startedAt: string;
  /**
   * The serving child's own loopback URL, rewritten on every hot swap (and removed while no child
   * serves): a gateway sends requests there directly, one hop fewer than `url`, and falls back to `url`
   * when it is refused. Trusted only once it answers as the same instance.
   */
  readonly child?: string;
}

/** `<slot>/root`: the folder a slot's serve was started in, kept after its record is gone (last-served.ts). */
export const LAST_ROOT_FILE = 'root';

export const recordPath = (home: string, root: string): string => join(home, 'projects', encodeProject(root), 'endpoint.json');

export async function writeEndpointRecord(home: string, record: EndpointRecord, whileWriting?: () => Promise<void>): Promise<string> {
  const path = recordPath(home, record.root);
  mkdirSync(join(path, '..'), { recursive: true });
  // Kept after the record is gone: the project's offline page can still start or register it.
  writeFileSync(join(path, '..', LAST_ROOT_FILE), `${record.root}\n`);
  // whileWriting: awaited once the temporary file exists, before the rename (the supervisor's test pause).
  await writeAtomic(path, `${JSON.stringify(record, null, 2)}\n`, whileWriting ? { tmpfileCreated: whileWriting } : {});
  return path;
}

/** A claim older than this was left by a serve that died while claiming: it is taken over. */
const CLAIM_STALE_MS = 30_000;

/**
 * Runs `fn` (check the record, then write it) while holding `<slot>/endpoint.json.lock`, created
 * exclusively: two serves of one project starting at the same moment take turns, so the second sees the
 * first's record live and refuses instead of overwriting it. Waits up to `waitMs` for a live claim.
 */
export async function withRecordClaim<T>(home: string, root: string, fn: () => Promise<T>, waitMs = 20_000): Promise<T> {
  const lock = `${recordPath(home, root)}.lock`;
  mkdirSync(join(lock, '..'), { recursive: true });
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx'));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let age: number;
      try {
        age = Date.now() - statSync(lock).mtimeMs;
      } catch {
        continue; // released meanwhile
      }
      if (age > CLAIM_STALE_MS) rmSync(lock, { force: true });
      else if (Date.now() > deadline) throw new TrellisError('REF_LOCKED', `${lock} is held by another serve starting up; if no trellis serve is starting, remove it: rm '${lock}'`);
      else await new Promise((r) => setTimeout(r, 50));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { force: true });
  }
}

/** Removes the record only if it still carries `instanceId`: a newer serve's record is never touched. */
export function removeEndpointRecord(home: string, root: string, instanceId: string): boolean {
  const path = recordPath(home, root);
  const current = readRecordJson(path);
  if (!current || (current as { instanceId?: unknown }).instanceId !== instanceId) return false;
  rmSync(path, { force: true });
  return true;
}

/** `raw` if it has the shape of an endpoint record of this version, else null. */
export function asRecord(raw: unknown): EndpointRecord | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const r = raw as Record<string, unknown>;
  const id = r.identity as Record<string, unknown> | undefined;
  const ok =
    r.version === RECORD_VERSION &&
    typeof r.url === 'string' &&
    typeof r.pid === 'number' &&
    typeof r.instanceId === 'string' &&
    typeof r.root === 'string' &&
    typeof r.startedAt === 'string' &&
    (r.child === undefined || typeof r.child === 'string') &&
    typeof id === 'object' &&
    id !== null &&
    typeof id.toplevel === 'string' &&
    typeof id.gitCommonDir === 'string' &&
    typeof id.worktree === 'boolean';
  return ok ? (raw as EndpointRecord) : null;
}

export function isLoopback(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** A record file's JSON: undefined when there is none, null when it does not parse. */
export function readRecordJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : null;
  }
}
