import { watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { supervised, type SessionState } from '../../../projections/index.js';
import type { SessionsProject } from '../log/sessions-project.js';
import { PaneWatch } from '../tmux/pane-watch.js';
import { readScreen, screenWatched } from './screen-watch.js';
import { claim, leaseHolder, release } from './screen-watcher-lease.js';
import type { SessionRuntime } from '../log/session-runtime.js';

/*
 * Status without a serve (issue 41): a session whose agent draws dialogs no hook announces (Claude Code's
 * auto-mode dialog) is watched by a process of its own, started by its launch (spawn or resume, with or
 * without a serve) and gone with it. It reads the screen exactly as a serve does (pane-watch.ts hears the
 * pane through one tmux control client; screen-watch.ts says what a screen means), and what it records
 * goes through the session log's compare-and-swap append, re-decided there: a serve and a watcher that
 * both saw one dialog append one wait. It reads dialogs only (the wait no hook says in time); a serve
 * still reads every watched screen, for an agent back at its input with no hook too (Esc mid-turn).
 *
 * While a serve of the project is online the watcher stands by (issue 40): the serve reads every such
 * screen through its one control client (pane-hub.ts), and a client per session more made tmux walk them
 * all for every pane it read. It detaches its client, says so in its lease (`session show` then names no
 * watcher) and takes the screen back as the serve's endpoint record goes (heard in the record's folder).
 */

/** How often the watcher re-reads its session with nothing said (a ref rewritten in a way no fs event tells). */
const CHECK_MS = 5_000;

/** Why a watcher ended. */
export type WatcherEnd = 'ended' | 'tmux-gone' | 'replaced' | 'unreadable' | 'handed-off';

/**
 * Watches session `id`'s screen until the session stops being one whose agent lives (interrupted,
 * closed, quarantined, failed), its tmux session or server is gone, a newer watcher takes the lease,
 * or its log cannot be read (the project is gone). Its control client stays attached from the start (so
 * the tmux session's end is heard, never polled for); its screens are judged only while the session is
 * one a serve would watch (screenWatched). It learns of transitions from the session refs' folder, and of a newer watcher from the lease's.
 */
/** The pid of a serve of the project online now, or null (cheap to ask often), and the folder where that changes (store/host/serve-online.ts). */
export interface ServeSeen {
  online(): Promise<number | null>;
  readonly folder: string;
}

/**
 * `handOff`: while a serve is online, a process far lighter than this one could wait for it to end and
 * then start a watcher again (cli: `tail --pid`); it returns that process's pid, which the lease then
 * names (standing by), and this watcher ends ('handed-off'), or null to stand by in this process.
 */
export function watchScreens(p: SessionsProject, rt: SessionRuntime, id: string, opts: { checkMs?: number; serve?: ServeSeen; handOff?: (servePid: number) => number | null } = {}): Promise<WatcherEnd> {
  const gitdir = p.gitdir;
  claim(gitdir, id);
  const served = opts.serve?.online ?? (async () => null);
  let standingBy = false;
  const idleReads = new Map<string, number>();
  return new Promise((resolve) => {
    let done = false;
    let checking = false;
    let again = false;
    const panes = new PaneWatch(undefined, (_id, reason) => {
      if (process.env.TRELLIS_DEBUG) console.error(`trellis: watcher of ${id}: ${reason}`);
      finish('tmux-gone');
    });
    const finish = (why: WatcherEnd) => {
      if (done) return;
      done = true;
      clearInterval(timer);
      for (const w of watchers) w.close();
      panes.stop();
      release(gitdir, id);
      resolve(why);
    };
    const read = async (screen: string): Promise<boolean> => {
      const s = await state();
      if (done || !s || !screenWatched(s)) return false;
      // Dialogs only: an idle screen read before a slow Stop hook would take the turn's end from it (and
      // a pane's idle never clears the failure streak the Stop would), so the hooks say a turn ended.
      return readScreen(p, s, screen, idleReads, { dialogsOnly: true });
    };
    const state = (): Promise<SessionState | null> => p.sessionLog.get(id).catch(() => null);
    const check = async (): Promise<void> => {
      if (checking) {
        again = true;
        return;
      }
      checking = true;
      try {
        do {
          again = false;
          if (done) return;
          const s = await state();
          if (!s) return finish('unreadable');
          if (!(s.status === 'starting' || supervised(s.status))) return finish('ended');
          // A newer watcher's lease ends this one; a lease gone (an older one's exit raced this claim) is taken again.
          const holder = leaseHolder(gitdir, id);
          if (holder !== null && holder !== process.pid) return finish('replaced');
          if (holder === null) claim(gitdir, id, standingBy);
          const servePid = await served();
          if (done) return;
          const waiter = servePid !== null && opts.handOff ? opts.handOff(servePid) : null;
          if (waiter !== null) {
            claim(gitdir, id, true, waiter);
            return finish('handed-off');
          }
          if ((servePid !== null) !== standingBy) {
            standingBy = servePid !== null;
            claim(gitdir, id, standingBy);
          }
          if (s.tmux && !standingBy) panes.watch(id, { socket: rt.tmux.socket, session: s.tmux.session, pane: s.tmux.pane }, read);
          else panes.unwatch(id);
        } while (again);
      } catch (err) {
        console.error(`trellis: watcher of ${id}: ${(err as Error).message}`);
        finish('unreadable');
      } finally {
        checking = false;
      }
    };
    // Every transition moves the session's ref: a rename in this folder (a packed ref is caught by the timer).
    // A newer watcher's claim renames its lease into the watchers' folder: heard there at once, so two never
    // read one screen for up to a timer's period (a resume's watcher and the old one).
    const watchers: FSWatcher[] = [];
    // A serve's endpoint record comes and goes in its slot's folder: the watcher stands by or takes the screen back.
    const slot = opts.serve?.folder;
    for (const dir of [join(gitdir, 'refs', 'trellis', 'sessions'), join(gitdir, 'trellis', 'watchers'), ...(slot ? [slot] : [])]) {
      try {
        const w = watch(dir, { persistent: false }, (_event, name) => {
          if (name === null || String(name).startsWith(dir === slot ? 'endpoint.json' : id)) void check();
        });
        w.on('error', () => void check());
        watchers.push(w);
      } catch {
        // No such folder yet (no session ref written): the timer checks.
      }
    }
    const timer = setInterval(() => void check(), opts.checkMs ?? CHECK_MS);
    void check();
  });
}
