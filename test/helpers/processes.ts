import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * Ends every process still running from a test's own folders and waits until they are gone, so the folders
 * can be removed: codex starts an app-server daemon under `$CODEX_HOME/packages/` that outlives its TUI
 * (and the tmux server the test kills), and an agent's last hook (`trellis session signal`, run from the
 * project's root as tmux kills the agent) or the worktree pool's refill can still be writing into the
 * repository — and can start a git child after a first look. So it looks again until a look finds nothing.
 * Read from /proc: only processes whose command line names one of `dirs` or whose working directory is
 * inside one are touched. Returns how many it ended.
 */
export function endProcessesIn(dirs: readonly string[], timeoutMs = 15_000): number {
  const deadline = Date.now() + timeoutMs;
  let ended = 0;
  for (;;) {
    const found = processesIn(dirs);
    if (found.length === 0) return ended;
    for (const pid of found) {
      try {
        process.kill(pid, 'SIGKILL');
        ended++;
      } catch {
        // exited meanwhile
      }
    }
    // Wait for the ones killed to be gone (or zombies: their files are closed), then look again.
    while (found.some(running) && Date.now() < deadline) pause(20);
    if (Date.now() >= deadline) throw new Error(`processes still running in ${dirs.join(', ')}: ${processesIn(dirs).join(' ')}`);
  }
}

function processesIn(dirs: readonly string[]): number[] {
  const inside = (path: string) => dirs.some((d) => path === d || path.startsWith(`${d}/`));
  const pids: number[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d) && Number(d) !== process.pid)) {
    if (!running(Number(pid))) continue;
    const cmdline = readOr(() => readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
    const cwd = readOr(() => readlinkSync(`/proc/${pid}/cwd`));
    if (dirs.some((d) => cmdline.includes(`${d}/`) || cmdline.includes(`${d}\0`) || cmdline.endsWith(d)) || inside(cwd)) pids.push(Number(pid));
  }
  return pids;
}

/** Alive and not a zombie (a zombie has closed its files). */
function running(pid: number): boolean {
  const stat = readOr(() => readFileSync(`/proc/${pid}/stat`, 'utf8'));
  if (!stat) return false;
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
}

function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** What `read` answers, or '' when the process is gone meanwhile. */
function readOr(read: () => string): string {
  try {
    return read();
  } catch {
    return '';
  }
}
