import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SessionState } from '../src/projections/index.js';
import { capturePane } from '../src/store/sessions/tmux/pane-capture.js';
import type { PaneTarget } from '../src/store/sessions/tmux/pane-target.js';

/** A state as the agents bench names it: status{reason}. */
export const label = (s: SessionState): string => (s.reason ? `${s.status}{${s.reason}}` : s.status);

/** Polls until `check` gives a value or the limit passes (null). */
export async function poll<T>(check: () => Promise<T | null>, until: number): Promise<T | null> {
  while (performance.now() < until) {
    const v = await check().catch(() => null);
    if (v !== null) return v;
    await sleep(25);
  }
  return null;
}

/**
 * One agents-bench run: the screen and the session's state polled side by side until `until`. When a
 * line matching `screen` showed (the task's own echo is not the change) and when the state became `expect`;
 * what the state last was and, for a run that never reached it, what the screen said instead. Beside
 * them, when the transition was decided (its event's `at`) and, given `hooks`, which hook process recorded it.
 */
export async function screenAgainstState(target: PaneTarget, task: string, screen: RegExp, expect: string, stateOf: () => Promise<SessionState>, until: number, hooks?: HookStarts) {
  let state = '';
  let matched = '';
  // When the transition that said it was decided (its event's `at`, on this process's clock).
  let decidedAt = null as number | null;
  // Who said the state (its source): only a state a hook said is timed from a hook's start.
  let source = null as string | null;
  const [screenAt, stateAt] = await Promise.all([
    poll(async () => {
      const line = (await capturePane(target)).text.split('\n').find((l) => screen.test(l) && !l.includes(task));
      if (line === undefined) return null;
      matched = line.trim();
      return performance.now();
    }, until),
    poll(async () => {
      hooks?.scan();
      const now = await stateOf();
      state = label(now);
      if (state !== expect) return null;
      decidedAt = Date.parse(now.updatedAt) - performance.timeOrigin;
      source = now.source;
      return performance.now();
    }, until),
  ]);
  // The hook that recorded the state, if one did (its source says `hook`: not a pane reader, a watcher or
  // Codex's protocol, whose own command line may name the hook's): the last hook process to start before
  // the transition was decided, and decided while it could still be running.
  const last = decidedAt !== null && source === 'hook' ? (hooks?.before(decidedAt) ?? null) : null;
  const hook = last && decidedAt !== null && decidedAt - last.at <= HOOK_RUN_MS ? last : null;
  const missedScreen = stateAt === null ? (await capturePane(target).catch(() => ({ text: '' }))).text.split('\n').map((l) => l.trim()).filter(Boolean).slice(-4).join(' | ').slice(0, 300) : null;
  return { screenAt, stateAt, state, matched, missedScreen, hook, decidedAt };
}

/** The longest a hook process is taken to run before it decides (a command hook: 105–320 ms wall; a confined one, start → decided, p95 350–450 ms at load 8). */
const HOOK_RUN_MS = 800;

/**
 * When the agent's own hook processes for session `id` started (`… session signal <id> <event>`: the
 * command hook, or a confined agent's relay client), seen in /proc while a run polls, on this process's
 * performance.now() clock (/proc's starttime: 10 ms ticks). What tells the agent's own time (the screen
 * drawn → the agent runs its hook) from Trellis's (the hook started → the state recorded). Only pids not
 * seen before are read, so a scan is one listing of /proc.
 */
export class HookStarts {
  private readonly seen = new Set<number>();
  private readonly starts: { event: string; at: number }[] = [];
  /** Boot, on the performance.now() clock. */
  private readonly bootAt: number;

  constructor(private readonly id: string) {
    this.bootAt = performance.now() - Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * 1000;
    this.scan();
  }

  scan(): void {
    for (const name of readdirSync('/proc')) {
      const pid = Number(name);
      if (!Number.isInteger(pid) || this.seen.has(pid)) continue;
      this.seen.add(pid);
      try {
        const words = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/[\0 ]/);
        const i = words.findIndex((w, k) => w === 'signal' && words[k - 1] === 'session' && words[k + 1] === this.id);
        if (i < 0) continue;
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        // starttime is field 22; the fields after the command's closing parenthesis start at field 3.
        const ticks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
        this.starts.push({ event: (words[i + 2] ?? '').replace(/['"]/g, ''), at: this.bootAt + ticks * 10 });
      } catch {
        // gone before it was read
      }
    }
  }

  /**
   * The hook that recorded a state seen at `stateAt`: the last to start before it (the shell the agent
   * started and the program it runs are one hook: the first of the same event within 100 ms), or null.
   */
  before(stateAt: number): { event: string; at: number } | null {
    const sorted = this.starts.filter((s) => s.at <= stateAt).sort((a, b) => a.at - b.at);
    const last = sorted.at(-1);
    if (!last) return null;
    return sorted.find((s) => s.event === last.event && last.at - s.at <= 100) ?? last;
  }
}
