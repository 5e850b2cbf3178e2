import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeAtomic } from '../write-atomic.js';
import { isLoopback } from './endpoint-record.js';

/**
 * The running host gateway's record, `$TRELLIS_HOME/hub-endpoint.json`: how `trellis serve ui` finds it.
 *
 * Hub record format versions (`version`):
 *   1 — initial: { version, url, pid, instanceId, startedAt }.
 */
export interface HubRecord {
  readonly version: 1;
  /** A loopback URL of the gateway (its public one when it listens on loopback). */
  readonly url: string;
  readonly pid: number;
  readonly instanceId: string;
  readonly startedAt: string;
}

export const hubRecordPath = (home: string): string => join(home, 'hub-endpoint.json');

export async function writeHubRecord(home: string, record: HubRecord): Promise<void> {
  mkdirSync(home, { recursive: true });
  await writeAtomic(hubRecordPath(home), `${JSON.stringify(record, null, 2)}\n`);
}

/** Removes the record only while it is still this instance's. */
export function removeHubRecord(home: string, instanceId: string): void {
  try {
    const r = JSON.parse(readFileSync(hubRecordPath(home), 'utf8')) as { instanceId?: unknown };
    if (r.instanceId === instanceId) rmSync(hubRecordPath(home), { force: true });
  } catch {}
}

/** The gateway's record when a live gateway answers GET /health at its url as the same instance; else null. */
export async function onlineHub(home: string, opts: { timeoutMs?: number; ca?: string } = {}): Promise<HubRecord | null> {
  let r: HubRecord;
  try {
    r = JSON.parse(readFileSync(hubRecordPath(home), 'utf8')) as HubRecord;
    if (r.version !== 1 || typeof r.url !== 'string' || typeof r.instanceId !== 'string' || !isLoopback(new URL(r.url).hostname)) return null;
  } catch {
    return null;
  }
  try {
    const res = await fetch(new URL('/health', r.url), { signal: AbortSignal.timeout(opts.timeoutMs ?? 1_500) });
    const live = (await res.json()) as { instanceId?: unknown; role?: unknown };
    return live.instanceId === r.instanceId && live.role === 'gateway' ? r : null;
  } catch {
    return null;
  }
}
