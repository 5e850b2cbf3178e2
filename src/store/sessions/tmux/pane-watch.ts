import { ControlClient } from './control-client.js';
import { PaneHub } from './pane-hub.js';
import type { PaneTarget } from './pane-target.js';

/** Least time between two reads of one session's screen. */
export const PANE_READ_MS = 700;

/**
 * Reads the screen just captured; true asks for another read PANE_READ_MS later even if the pane writes
 * nothing meanwhile (an idle screen seen once is confirmed by a second read).
 */
export type ScreenReader = (screen: string) => Promise<boolean>;

interface Watched {
  readonly id: string;
  readonly target: PaneTarget;
  readonly client: ControlClient;
  /** The hub whose client this is (a shared watch), or none (the client is this session's own). */
  readonly hub: PaneHub | null;
  readonly read: ScreenReader;
  lastRead: number;
  timer: NodeJS.Timeout | undefined;
  reading: boolean;
  /** Output came (or a read was asked for) since the last read began. */
  due: boolean;
  /** This client asked tmux to hold the pane's output back from it: the change is already noted. */
  paused: boolean;
}

/**
 * Screens read when their panes change, not by polling (issue 40): a tmux control-mode client kept
 * attached to each watched session hears `%output` as the pane writes; the screen is then read through
 * the same client (`capture-pane`, no process spawned per read), at most every PANE_READ_MS. Between a
 * change and its read the pane's output is paused for this client only (`refresh-client -A %N:pause`:
 * tmux keeps reading the pane and every other client sees it all), so a busy agent costs one notice and
 * one capture per read, not its whole output stream decoded. tmux sends a control client the output of
 * its attached session's panes only: a watch of one session attaches a client to it; a `shared` watch
 * (the serve's, of every session) keeps one client per tmux server, with each pane's window linked into
 * a session of its own (pane-hub.ts).
 */
export class PaneWatch {
  private readonly watched = new Map<string, Watched>();
  private readonly hubs = new Map<string, PaneHub>();

  /** `gone` hears a watched session's control client end by itself (its tmux session or server is gone). */
  constructor(
    private readonly now: () => number = () => performance.now(),
    private readonly gone: (id: string, reason: string) => void = () => {},
    /** `died`: a shared watch's pane whose process exited (tmux keeps it dead), for its owner to record. */
    private readonly opts: { shared?: boolean; died?: (id: string) => void } = {},
  ) {}

  /** Session ids watched now (tests). */
  ids(): string[] {
    return [...this.watched.keys()];
  }

  /**
   * Watches session `id`'s pane: `read` gets its screen once now and then after the pane writes, at
   * most every PANE_READ_MS. Watching the same pane again keeps the watch; a new pane replaces it.
   */
  watch(id: string, target: PaneTarget, read: ScreenReader): void {
    const known = this.watched.get(id);
    if (known && known.client.alive && known.target.socket === target.socket && known.target.session === target.session && known.target.pane === target.pane) return;
    if (known) this.unwatch(id);
    let w: Watched | undefined;
    const ended = (reason: string) => {
      if (!w || this.watched.get(id) !== w) return;
      this.unwatch(id);
      this.gone(id, reason);
    };
    if (this.opts.shared) {
      const hub = this.hubFor(target.socket);
      w = { id, target, client: hub.client, hub, read, lastRead: -Infinity, timer: undefined, reading: false, due: false, paused: false };
      const mine = w;
      hub.join(target.pane, { output: () => this.changed(mine), paused: () => (mine.paused = true), layout: () => this.changed(mine), died: () => this.opts.died?.(id), gone: ended });
    } else {
      const client = new ControlClient(target, {
        output: (pane) => {
          if (w && pane === target.pane) this.changed(w);
        },
        paused: (pane) => {
          if (w && pane === target.pane) w.paused = true;
        },
        layout: () => {
          if (w) this.changed(w);
        },
        exit: ended,
        // Only that the pane wrote matters here: its bytes are never decoded.
      }, { outputBytes: false });
      // A watcher has no terminal: the panes keep the size their people and viewers give them.
      void client.command('refresh-client -f ignore-size').catch(() => {});
      w = { id, target, client, hub: null, read, lastRead: -Infinity, timer: undefined, reading: false, due: false, paused: false };
    }
    this.watched.set(id, w);
    this.schedule(w);
  }

  /** The hub of the tmux server at `socket`, made on first use and ended with its last pane. */
  private hubFor(socket: string): PaneHub {
    const known = this.hubs.get(socket);
    if (known?.client.alive) return known;
    const hub = new PaneHub(socket, () => {
      if (this.hubs.get(socket) === hub) this.hubs.delete(socket);
    });
    this.hubs.set(socket, hub);
    return hub;
  }

  unwatch(id: string): void {
    const w = this.watched.get(id);
    if (!w) return;
    this.watched.delete(id);
    if (w.timer) clearTimeout(w.timer);
    w.timer = undefined;
    if (!w.hub) return w.client.stop();
    w.hub.leave(w.target.pane);
    if (w.hub.size === 0) {
      w.hub.stop();
      if (this.hubs.get(w.target.socket) === w.hub) this.hubs.delete(w.target.socket);
    }
  }

  stop(): void {
    for (const id of [...this.watched.keys()]) this.unwatch(id);
  }

  /** The pane wrote: read it once the last read is PANE_READ_MS old; hold its output back until then. */
  private changed(w: Watched): void {
    if (!w.paused) {
      w.paused = true;
      void w.client.command(`refresh-client -A '${w.target.pane}:pause'`).catch(() => (w.paused = false));
    }
    this.schedule(w);
  }

  private schedule(w: Watched): void {
    w.due = true;
    if (w.timer || w.reading) return;
    const wait = Math.max(0, w.lastRead + PANE_READ_MS - this.now());
    w.timer = setTimeout(() => void this.readNow(w), wait);
    w.timer.unref?.();
  }

  private async readNow(w: Watched): Promise<void> {
    w.timer = undefined;
    if (this.watched.get(w.id) !== w) return;
    w.reading = true;
    w.due = false;
    w.lastRead = this.now();
    let again = false;
    try {
      const screen = await this.capture(w);
      again = screen !== null && (await w.read(screen));
    } catch (err) {
      console.error(`trellis: reading pane ${w.target.pane}: ${(err as Error).message}`);
    } finally {
      w.reading = false;
    }
    if (again || w.due) this.schedule(w);
  }

  /**
   * The pane's screen through the control client: its output resumed for this client and the screen
   * captured in one command line, so a change after the capture is heard as `%output`.
   */
  private capture(w: Watched): Promise<string | null> {
    return new Promise((resolve) => {
      const capture = (err: Error | null, lines: Buffer[]) => {
        if (err) return resolve(null);
        const text = lines.map((l) => l.toString('utf8'));
        while (text.length && text[text.length - 1]!.trim() === '') text.pop();
        resolve(text.join('\n'));
      };
      const pane = w.target.pane;
      if (w.paused) {
        w.paused = false;
        w.client.send(`refresh-client -A '${pane}:continue' ; capture-pane -p -J -t '${pane}'`, [() => {}, capture]);
      } else {
        w.client.send(`capture-pane -p -J -t '${pane}'`, [capture]);
      }
    });
  }
}
