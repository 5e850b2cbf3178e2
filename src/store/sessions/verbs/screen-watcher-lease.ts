import { mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { adapterOf } from '../agents/index.js';

/*
 * The lease of a session's own screen watcher (screen-watcher.ts): a file under `<gitdir>/trellis/watchers/`
 * naming its pid. Read by the launch (whether to start one) and by a serve (which leaves a session with
 * a live watcher to it); kept apart from the watcher, which the CLI loads only when it runs one.
 */

/** Whether a session's agent has screens worth a watcher (it draws dialogs or an input box Trellis reads). */
export function hasScreens(harness: string): boolean {
  const adapter = adapterOf(harness);
  return Boolean(adapter.dialogOnScreen || adapter.idleOnScreen);
}

const leaseFile = (gitdir: string, id: string): string => join(gitdir, 'trellis', 'watchers', id);

/**
 * The pid of session `id`'s live watcher reading its screen, or null: its lease names a process that runs
 * and (where /proc says) is that watcher, not a process that took a dead watcher's pid, and that is not
 * standing by for a serve (which reads the screen then). No process is spawned to ask.
 */
export function screenWatcherOf(gitdir: string, id: string): number | null {
  const pid = leaseHolder(gitdir, id);
  if (pid === null || leaseStandsBy(gitdir, id)) return null;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return null;
  }
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const at = argv.indexOf('watch-screen');
    return at >= 0 && argv[at + 1] === id ? pid : null;
  } catch {
    // No /proc (macOS): the signal said it runs.
    return pid;
  }
}

/**
 * Takes the lease: the newest watcher of a session wins (a resume's), an older one sees it and leaves.
 * `standby`: the watcher leaves the screen to a serve online (`<pid> serve`); taken again as it changes.
 * `pid`: the process the lease names (a watcher handing its lease to the light process that waits for the serve).
 */
export function claim(gitdir: string, id: string, standby = false, pid = process.pid): void {
  const file = leaseFile(gitdir, id);
  mkdirSync(join(gitdir, 'trellis', 'watchers'), { recursive: true });
  writeFileSync(`${file}.${process.pid}`, `${pid}${standby ? ' serve' : ''}\n`);
  renameSync(`${file}.${process.pid}`, file);
}

/** Whether the lease's watcher stands by while a serve reads the screen. */
export function leaseStandsBy(gitdir: string, id: string): boolean {
  try {
    return readFileSync(leaseFile(gitdir, id), 'utf8').trim().split(' ')[1] === 'serve';
  } catch {
    return false;
  }
}

/** The pid the lease names (null: no lease, e.g. an older watcher's exit removed it as this one claimed it). */
export function leaseHolder(gitdir: string, id: string): number | null {
  try {
    const pid = Number(readFileSync(leaseFile(gitdir, id), 'utf8').trim().split(' ')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

export function release(gitdir: string, id: string): void {
  try {
    if (leaseHolder(gitdir, id) === process.pid) unlinkSync(leaseFile(gitdir, id));
  } catch {
    // Gone already: the project was removed, or a newer watcher's cleanup.
  }
}

