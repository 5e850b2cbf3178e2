import { existsSync } from 'node:fs';
import { quarantineDue, supervised, type SessionState } from '../../../projections/index.js';
import type { ChangeFeed } from '../log/change-feed.js';
import type { SessionsProject as Project } from '../log/sessions-project.js';
import { adapterOf } from '../agents/index.js';
import { PaneWatch } from '../tmux/pane-watch.js';
import { readScreen, screenWatched } from './screen-watch.js';
import { queuePass } from './queue.js';
import { record, trellisCommand, type SessionRuntime } from './runtime.js';
import { deliverHeld, quarantineSession } from './verbs.js';
import { signalSession } from './signal-verb.js';
import { kickRefill } from '../worktrees/worktree-pool.js';

/** How often the supervisors re-check without being told (tmux killed from outside sends no event). */
const RESYNC_MS = 30_000;

/**
 * The turn-failure supervisor's pass (spec §4.2 rule 2): re-installs each live session's adapter
 * subscription (its hooks), then reconciles what happened while nobody watched: a tmux session that
 * vanished → `interrupted{tmux-gone}`, a dead pane → `interrupted{process-exit}`, repeated turn
 * failures → `quarantined`. One `tmux list-panes` for all sessions; none at all when nothing is live.
 */
export async function reconcile(p: Project, rt: SessionRuntime, opts: { install?: boolean } = {}): Promise<string[]> {
  const { states } = await p.sessionLog.all();
  const live = states.filter((s) => supervised(s.status));
  if (live.length === 0) return [];
  const listing = await rt.tmux.run(['list-panes', '-a', '-F', '#{session_name} #{pane_id} #{pane_dead}']);
  // A pane is listed once per session its window is linked into (a serve's watch links every watched
  // window into its own session: pane-hub.ts), so a pane keeps every session it is listed in.
  const panes = new Map<string, { sessions: Set<string>; dead: boolean }>();
  for (const line of listing.code === 0 ? listing.stdout.split('\n') : []) {
    const [session, pane, dead] = line.split(' ');
    if (session && pane) {
      const known = panes.get(pane);
      if (known) known.sessions.add(session);
      else panes.set(pane, { sessions: new Set([session]), dead: dead === '1' });
    }
  }
  const changed: string[] = [];
  for (const s of live) {
    try {
      if (await reconcileOne(p, rt, s, panes, opts.install ?? false)) changed.push(s.id);
    } catch (err) {
      console.error(`trellis: reconciling session ${s.id}: ${(err as Error).message}`);
    }
  }
  return changed;
}

async function reconcileOne(p: Project, rt: SessionRuntime, s: SessionState, panes: Map<string, { sessions: Set<string>; dead: boolean }>, install: boolean): Promise<boolean> {
  const pane = s.tmux ? panes.get(s.tmux.pane) : undefined;
  if (!pane || !pane.sessions.has(s.tmux!.session)) {
    await record(p, s.id, { type: 'interrupt', reason: 'tmux-gone' });
    return true;
  }
  if (pane.dead) {
    await record(p, s.id, { type: 'interrupt', reason: 'process-exit', source: 'process' });
    return true;
  }
  const quarantine = quarantineDue(s);
  if (quarantine) {
    await quarantineSession(p, rt, s.id, 'trellis', quarantine, 'supervisor');
    return true;
  }
  if (install && existsSync(s.worktree)) await adapterOf(s.harness).install(s.worktree, { session: s, resume: false, trellis: trellisCommand(), apiUrl: await rt.apiUrl() });
  return false;
}

/** Every live session's hooks as command hooks (no serve to POST to): the fallback when the serve stops. */
async function reinstallCommandHooks(p: Project): Promise<void> {
  const { states } = await p.sessionLog.all();
  for (const s of states.filter((x) => supervised(x.status) && existsSync(x.worktree))) {
    await adapterOf(s.harness).install(s.worktree, { session: s, resume: false, trellis: trellisCommand(), apiUrl: null });
  }
}

/**
 * The server's session supervisors, started at boot by the entry that serves (`http/child-main.ts`,
 * `http/serve.ts`), which stops them as it shuts down: the turn-failure reconcile (at boot, then on a slow
 * resync) and the queue (at boot, on every session transition any process makes, and on the resync, so
 * freed memory is noticed). Detached tmux sessions are never touched by a server starting or stopping.
 */
export class SessionSupervisors {
  private timer: NodeJS.Timeout | undefined;
  /** The watched sessions' panes, each read when it writes (pane-watch.ts). */
  // Every session this serve watches through one control client per tmux server (pane-hub.ts).
  // A watched agent's exit is recorded as its pane-died hook records it (`session signal <id> exit`): tmux does
  // not always run that hook while the window is linked into the watch's session. Recorded twice, it is one exit.
  private readonly panes = new PaneWatch(undefined, undefined, {
    shared: true,
    died: (id) => void signalSession(this.project, this.rt, id, 'exit', null).catch((err: unknown) => console.error(`trellis: session ${id}'s exit: ${(err as Error).message}`)),
  });
  /** Per running session, how many reads in a row showed its agent idle. */
  private readonly idleReads = new Map<string, number>();
  /** The watched sessions as the log said at the last pass (each transition runs one): what a read judges against. */
  private watchedStates = new Map<string, SessionState>();
  /** Sessions whose held prompts a pane read is already trying to deliver. */
  private readonly retrying = new Set<string>();
  /** A pass over which panes to watch is running; another is due after it. */
  private watching = false;
  private watchAgain = false;
  private stopped = false;
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly project: Project,
    private readonly rt: SessionRuntime,
    private readonly live: ChangeFeed,
  ) {}

  start(): this {
    this.live.bus.on('change', this.onChange);
    void this.pass({ install: true });
    void this.watchPanes();
    this.timer = setInterval(() => {
      void this.pass({});
      void this.watchPanes();
    }, RESYNC_MS).unref();
    return this;
  }

  stop(): void {
    // The agents' HTTP hooks point at this serve: back to command hooks (best effort, as the serve goes).
    if (!this.stopped) void reinstallCommandHooks(this.project).catch(() => {});
    this.stopped = true;
    this.live.bus.off('change', this.onChange);
    if (this.timer) clearInterval(this.timer);
    this.panes.stop();
  }

  /**
   * The pane beside the hooks (DESIGN.md §9): which sessions' panes are watched (their agent works, or
   * waits where its screen can say more), each read as it writes (pane-watch.ts; screen-watch.ts says
   * what a screen means). Run at start, on every session transition and on the resync.
   */
  private async watchPanes(): Promise<void> {
    if (this.watching) {
      this.watchAgain = true;
      return;
    }
    this.watching = true;
    try {
      do {
        this.watchAgain = false;
        if (this.stopped) return;
        const { states } = await this.project.sessionLog.all();
        if (this.stopped) return;
        const watched = new Map<string, SessionState>();
        for (const s of states) {
          if (!screenWatched(s)) continue;
          watched.set(s.id, s);
          this.panes.watch(s.id, { socket: this.rt.tmux.socket, session: s.tmux!.session, pane: s.tmux!.pane }, (screen) => this.readPane(s.id, screen));
        }
        this.watchedStates = watched;
        for (const id of this.panes.ids()) if (!watched.has(id)) this.panes.unwatch(id);
        for (const id of this.idleReads.keys()) if (!watched.has(id)) this.idleReads.delete(id);
      } while (this.watchAgain);
    } catch (err) {
      console.error(`trellis: watching session panes: ${(err as Error).message}`);
    } finally {
      this.watching = false;
    }
  }

  /**
   * One read of a watched pane, against the session as the last pass read it (no log read per screen:
   * every transition runs a pass, and what a read records is re-decided against the log as it is then).
   */
  private async readPane(id: string, screen: string): Promise<boolean> {
    const s = this.watchedStates.get(id);
    if (this.stopped || !s) return false;
    const again = await readScreen(this.project, s, screen, this.idleReads);
    // A held prompt whose delivery found no empty box (a dialog, someone's text): tried again as the box shows.
    if (s.pending.length > 0 && adapterOf(s.harness).idleOnScreen?.(screen) && !this.retrying.has(id)) {
      this.retrying.add(id);
      void this.serial(() => deliverHeld(this.project, this.rt, id).then(() => undefined)).finally(() => this.retrying.delete(id));
    }
    return again;
  }

  /** Resolves when the passes started so far are done (tests and shutdown). */
  idle(): Promise<unknown> {
    return this.running;
  }

  private readonly onChange = (e: { cause: string }) => {
    if (e.cause === 'sessions' || e.cause === 'config') void this.queue();
    if (e.cause === 'sessions') void this.watchPanes();
    // A branch moved (trunk, perhaps): the warm pool follows trunk's tip, in the background.
    if (e.cause === 'worktrees') {
      try {
        kickRefill(this.project, this.rt.env, { onlyIfMade: true });
      } catch (err) {
        console.error(`trellis: worktree pool: ${(err as Error).message}`);
      }
    }
  };

  /**
   * After a transition: quarantine what failed too often, deliver held prompts to agents that now take
   * input, launch what is queued. No tmux call unless a prompt is delivered.
   */
  private queue(): Promise<unknown> {
    return this.serial(async () => {
      const { states } = await this.project.sessionLog.all();
      for (const s of states) {
        const quarantine = quarantineDue(s);
        if (quarantine) {
          await quarantineSession(this.project, this.rt, s.id, 'trellis', quarantine, 'supervisor');
        } else if (supervised(s.status) && s.pending.length > 0) {
          await deliverHeld(this.project, this.rt, s.id);
        }
      }
      if (states.some((s) => s.status === 'queued')) await queuePass(this.project, this.rt);
    });
  }

  private pass(opts: { install?: boolean }): Promise<unknown> {
    return this.serial(async () => {
      await reconcile(this.project, this.rt, opts);
      await queuePass(this.project, this.rt);
    });
  }

  private serial(task: () => Promise<void>): Promise<unknown> {
    const run = this.running.then(async () => {
      if (this.stopped) return;
      try {
        await task();
      } catch (err) {
        console.error(`trellis: session supervisor: ${(err as Error).message}`);
      }
    });
    this.running = run;
    return run;
  }
}
