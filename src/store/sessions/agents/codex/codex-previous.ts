import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { protocolFiles } from './codex-app-server.js';

/*
 * What a previous launch of a Codex session left running (its watcher, its app-server), ended before a
 * resume's watcher starts its own on the same socket path (codex-watch.ts).
 */

/** The pid a file names, or null. */
export function readPid(file: string): number | null {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** Whether `pid` runs a program whose arguments include each of `words` (where /proc says; else whether it runs). */
function runs(pid: number, words: readonly string[]): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return words.every((w) => argv.some((a) => a.includes(w)));
  } catch {
    return true;
  }
}

/** How long the previous server may take to go once its client is gone (codex's shutdown: 1.3-1.8 s measured), before it is killed. */
const PREVIOUS_MS = 5_000;

/**
 * Ends what a previous launch of the session left running: its watcher (`previous`), whose client
 * connection keeps codex's graceful shutdown waiting (a SIGTERMed app-server with a client still connected
 * did not exit within 60 s), then its app-server, killed if it has not gone within PREVIOUS_MS. A pid is
 * trusted only while /proc says it is that program (a reused pid is left alone).
 */
export async function endPrevious(files: ReturnType<typeof protocolFiles>, id: string, previous: number | null): Promise<void> {
  if (previous !== null && previous !== process.pid && runs(previous, ['watch-codex', id])) signalGroup(previous, 'SIGTERM', false);
  const server = readPid(files.pid);
  const serverRuns = () => server !== null && runs(server, ['app-server', files.socket]);
  if (!serverRuns()) return;
  signalGroup(server!, 'SIGTERM', true);
  const deadline = Date.now() + PREVIOUS_MS;
  while (serverRuns() && Date.now() < deadline) await sleep(50);
  if (serverRuns()) signalGroup(server!, 'SIGKILL', true);
  while (serverRuns() && Date.now() < deadline + PREVIOUS_MS) await sleep(50);
}

/** Sends `signal` to `pid`'s process group (`group`: the app-server leads its own), else to `pid`; a process gone is no error. */
function signalGroup(pid: number, signal: NodeJS.Signals, group: boolean): void {
  for (const target of group ? [-pid, pid] : [pid]) {
    try {
      process.kill(target, signal);
      return;
    } catch {
      // gone, or no such group: the next target
    }
  }
}
