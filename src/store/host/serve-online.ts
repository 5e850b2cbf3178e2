import { dirname } from 'node:path';
import { alive, readEndpointRecord, statStamp } from './online-verdict.js';
import { recordPath } from './endpoint-record.js';
import type { ServeSeen } from '../sessions/verbs/screen-watcher.js';

/**
 * The pid of the serve of the project at `root` online now, or null; asked often (a session's screen watcher, at
 * each of its checks): proven once as online-verdict.ts proves it (the instance answers as its record
 * says), then trusted while the record file is unchanged and the serve's process runs, so a check costs
 * two syscalls and no request. A record rewritten (a new serve, a hot swap) or removed is asked again.
 */
export function serveOnline(home: string, root: string): ServeSeen {
  const path = recordPath(home, root);
  let proven: { readonly stamp: string; readonly pid: number } | null = null;
  return { folder: dirname(path), online: async () => {
    const now = statStamp(path);
    if (now === null) return (proven = null);
    if (proven && proven.stamp === now && alive(proven.pid)) return proven.pid;
    const verdict = await readEndpointRecord(home, root, { timeoutMs: 1_000 });
    proven = verdict.online ? { stamp: now, pid: verdict.record.pid } : null;
    return proven?.pid ?? null;
  } };
}
