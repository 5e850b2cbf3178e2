import { ControlClient } from './control-client.js';

/** What a pane watched through a hub hears. */
export interface HubPane {
  /** The pane wrote. */
  output(): void;
  /** tmux paused the pane's output for the hub's client. */
  paused(): void;
  /** Its window changed size or layout. */
  layout(): void;
  /** Its process exited (the pane is kept dead: remain-on-exit). */
  died(): void;
  /** Its window is gone, or the hub's client ended: nothing more will be heard of it. */
  gone(reason: string): void;
}

interface Joined {
  readonly events: HubPane;
  /** The pane's window (`@N`) once linked into the hub's session. */
  window: string | null;
}

let hubs = 0;

/**
 * One tmux control client for every pane a process watches on one tmux server (issue 40: a client per
 * watched session made the server walk every client for every pane on each pass of its loop, a cost
 * that grew with the square of the sessions). tmux sends a control client the output of the panes in
 * its own session's windows only, so the client starts a session of its own (`trellis-watch-<pid>-<n>`,
 * one idle `cat`) and each watched pane's window is linked into it (`link-window`): the agent's session
 * keeps its window, and a person attached to it sees nothing new. The session goes with the client
 * (`destroy-unattached`), and its links with it; the client goes with this process (control-client.ts).
 *
 * A window linked into two sessions outlives `kill-session` of one of them, so a window left linked
 * only here (its agent's session was closed by someone other than Tmux.kill, which kills the window
 * itself) is killed as its session would have killed it, and its pane is gone.
 */
export class PaneHub {
  readonly client: ControlClient;
  readonly session: string;
  private readonly joined = new Map<string, Joined>();
  /** Set once the client is in its own session: tmux may run what the client sends before its start command. */
  private attached = false;
  private readonly pending: (() => void)[] = [];
  private checking = false;
  private checkAgain = false;

  constructor(socket: string, ended: () => void) {
    this.session = `trellis-watch-${process.pid}-${++hubs}`;
    // Made by the client itself, so `destroy-unattached` ends it with the client; in one command line, so
    // nothing the client sends later reaches tmux before the session exists.
    // `dead`: tmux says when a pane's process exits (within a second). A pane's `pane-died` hook is not always
    // run while its window is linked here too (3 of 16 runs in pane-watch.test), so the watch tells its owner.
    const start = ['new-session', '-s', this.session, '-x', '80', '-y', '24', 'cat', ';', 'set-option', 'destroy-unattached', 'on', ';', 'refresh-client', '-f', 'ignore-size', ';', 'refresh-client', '-B', 'dead:%*:#{pane_dead}'];
    this.client = new ControlClient({ socket, session: this.session, pane: '' }, {
      output: (pane) => this.joined.get(pane)?.events.output(),
      paused: (pane) => this.joined.get(pane)?.events.paused(),
      subscription: (name, pane, value) => {
        if (name === 'dead' && value === '1') this.joined.get(pane)?.events.died();
      },
      layout: (window) => {
        for (const j of this.joined.values()) if (j.window === window) j.events.layout();
      },
      attached: () => {
        if (this.attached) return;
        this.attached = true;
        for (const run of this.pending.splice(0)) run();
      },
      sessionsChanged: () => void (this.attached && this.check()),
      windowClosed: () => void (this.attached && this.check()),
      exit: (reason) => {
        const all = [...this.joined.values()];
        this.joined.clear();
        for (const j of all) j.events.gone(reason);
        ended();
      },
    }, { outputBytes: false, start });
  }

  get size(): number {
    return this.joined.size;
  }

  /** Links `pane`'s window into the hub's session: from then on the hub hears it write. */
  join(pane: string, events: HubPane): void {
    const j: Joined = { events, window: null };
    this.joined.set(pane, j);
    if (this.attached) this.link(pane, j);
    else this.pending.push(() => this.joined.get(pane) === j && this.link(pane, j));
  }

  private link(pane: string, j: Joined): void {
    // Two lines, not `a ; b`: tmux skips the rest of a line after a command fails, and every answer
    // this client waits for is one block in order.
    const linked = this.client.command(`link-window -d -s '${pane}' -t '=${this.session}:'`);
    const window = this.client.command(`display-message -p -t '${pane}' '#{window_id}'`);
    void Promise.all([linked, window]).then(
      ([, lines]) => {
        const id = lines[0]?.toString().trim() || null;
        if (this.joined.get(pane) !== j) return this.unlink(id);
        j.window = id;
      },
      (err: Error) => {
        if (this.joined.get(pane) !== j) return;
        this.joined.delete(pane);
        j.events.gone(`tmux could not link the pane's window: ${err.message}`);
      },
    );
  }

  /** Unlinks `pane`'s window from the hub's session (the agent's own session keeps it). */
  leave(pane: string): void {
    const j = this.joined.get(pane);
    if (!j) return;
    this.joined.delete(pane);
    // Still being linked: the link's answer unlinks it.
    if (j.window) this.unlink(j.window);
  }

  stop(): void {
    this.joined.clear();
    this.pending.length = 0;
    this.client.stop();
  }

  private unlink(window: string | null): void {
    // -k: a window linked here only (its own session closed meanwhile) is killed, as that close meant.
    if (window) void this.client.command(`unlink-window -k -t '=${this.session}:${window}'`).catch(() => {});
  }

  /** A session closed or a window went: which watched panes' windows are gone or held by the hub alone. */
  private async check(): Promise<void> {
    if (this.checking) {
      this.checkAgain = true;
      return;
    }
    this.checking = true;
    try {
      do {
        this.checkAgain = false;
        let lines: Buffer[];
        try {
          lines = await this.client.command(`list-windows -t '=${this.session}:' -F '#{window_id} #{window_linked_sessions_list}'`);
        } catch {
          return;
        }
        const held = new Map<string, string[]>();
        for (const line of lines) {
          const [window, list = ''] = line.toString().trim().split(' ');
          if (window) held.set(window, list.split(',').filter((s) => s !== this.session));
        }
        for (const [pane, j] of [...this.joined]) {
          if (!j.window) continue;
          const others = held.get(j.window);
          if (others && others.length > 0) continue;
          this.joined.delete(pane);
          if (others) this.unlink(j.window);
          j.events.gone(others ? "its tmux session was closed (its window, held by the watch alone, is killed)" : 'its tmux window closed');
        }
      } while (this.checkAgain);
    } finally {
      this.checking = false;
    }
  }
}
