import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/*
 * The busy bench's (busy-sessions.ts) sessions' own screen watchers, as their launches start them: each
 * a `trellis session watch-screen <id>`, or while a serve is online the light waiter it hands its lease to.
 */

/**
 * `trellis session watch-screen <id>` for busy0..busy<n-1>, each holding its lease (watching, or standing by
 * for the serve) before this returns. A watcher may hand its lease to a light waiter (sh and tail) while a
 * serve is online, which becomes a watcher again as the serve goes: so they are found in /proc, by id.
 */
export async function startWatchers(bin: string, dir: string, env: NodeJS.ProcessEnv, n: number): Promise<string[]> {
  const ids = Array.from({ length: n }, (_, i) => `busy${i}`);
  for (const id of ids) spawn(process.execPath, [bin, 'session', 'watch-screen', id], { cwd: dir, env, stdio: 'ignore', detached: true }).unref();
  const lease = (id: string) => {
    try {
      return Number(readFileSync(join(dir, '.git', 'trellis', 'watchers', id), 'utf8').split(/\s/)[0]) > 0;
    } catch {
      return false;
    }
  };
  const t0 = performance.now();
  while (!ids.every(lease)) {
    if (performance.now() - t0 > 30_000) throw new Error("the sessions' screen watchers did not all take their leases in 30 s");
    await sleep(100);
  }
  return ids;
}

/** The pids of these sessions' watchers now: a watcher, or a waiter and its tail. */
export function watcherProcesses(ids: readonly string[]): number[] {
  const wanted = new Set(ids);
  const out: number[] = [];
  const parents = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const argv = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      const at = argv.indexOf('watch-screen');
      if (at >= 0 && wanted.has(argv[at + 1]!)) out.push(Number(d));
      else if (argv[0] === 'tail') {
        const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
        parents.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      }
    } catch {}
  }
  const mine = new Set(out);
  for (const [pid, parent] of parents) if (mine.has(parent)) out.push(pid);
  return out;
}

export async function stopWatchers(ids: readonly string[]): Promise<void> {
  const t0 = performance.now();
  for (let left = watcherProcesses(ids); left.length; left = watcherProcesses(ids)) {
    for (const pid of left) {
      try {
        process.kill(pid, performance.now() - t0 > 3_000 ? 'SIGKILL' : 'SIGTERM');
      } catch {}
    }
    if (performance.now() - t0 > 10_000) throw new Error(`watchers still running: ${left.join(', ')}`);
    await sleep(100);
  }
}

