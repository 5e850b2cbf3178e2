import { childProcess } from '../store/lazy-builtins.js';

/**
 * A session's screen watcher while a serve is online (issue 40): a Node process of some 60 MB doing
 * nothing but wait. It hands its lease to `sh` + GNU `tail --pid=<serve>`, which wait for the serve's
 * process to end (tail asks the kernel once a second: no fork, nothing read) and then become the
 * watcher again (`exec`, same pid, as the lease names it), which takes the screen back. Whatever ends
 * the serve, SIGKILL included, ends the wait. Where tail cannot wait on a pid (not GNU), null: the
 * watcher stands by in its own process.
 */
export function watcherHandOff(id: string): (servePid: number) => number | null {
  return (servePid) => {
    // Asked only once a serve is found, not at every watcher's start.
    if (!gnuTail()) return null;
    const argv = [process.execPath, ...process.execArgv, process.argv[1]!, 'session', 'watch-screen', id];
    // `watch-screen <id>` stays in the waiter's own argv: whoever looks for a session's watcher in /proc finds it.
    const child = childProcess().spawn('sh', ['-c', 'tail --pid="$1" -f /dev/null; shift; exec "$@"', 'trellis-watch-screen', String(servePid), ...argv], { cwd: process.cwd(), detached: true, stdio: 'ignore' });
    child.on('error', () => {});
    child.unref();
    return child.pid ?? null;
  };
}

let gnu: boolean | undefined;
function gnuTail(): boolean {
  if (gnu !== undefined) return gnu;
  try {
    gnu = /GNU coreutils/.test(childProcess().execFileSync('tail', ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
  } catch {
    gnu = false;
  }
  return gnu;
}
