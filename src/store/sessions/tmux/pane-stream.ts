import { ControlClient } from './control-client.js';
import { OutputLog } from './output-log.js';
import { PANE_FORMAT, parsePaneInfo, type PaneInfo } from './pane-capture.js';
import type { InputLanes } from './input-queue.js';
import { sendBytes } from './pane-input.js';
import type { PaneTarget } from './pane-target.js';

/**
 * WebSocket close codes of the pane stream (documented in the README):
 *   1000 the session ended (a `closed` message says why);
 *   1011 the server could not watch the pane;
 *   1012 the server is restarting (a reload): reconnect, a fresh snapshot follows;
 *   4001 this viewer fell too far behind and was dropped: it read too slowly to keep up.
 */
export const CLOSE = { ended: 1000, failed: 1011, restart: 1012, slow: 4001 } as const;

/** Bytes a viewer may leave unread before it is dropped (its socket's queue, never more). */
export const VIEWER_QUEUE_BYTES = 4 << 20;

/** One connected viewer, as the pane stream sees it (a WebSocket, in practice). */
export interface Viewer {
  sendBytes(bytes: Buffer): void;
  /**
   * Sends pane bytes already framed for the wire by the hub's framer: the same Buffer goes to every
   * viewer, so a chunk of output is framed once however many watch (optional: `sendBytes` otherwise).
   */
  sendFramed?(frame: Buffer): void;
  sendJson(message: object): void;
  /** Bytes handed to this viewer that it has not taken yet. */
  buffered(): number;
  close(code: number, reason: string): void;
}

/** Server → viewer control messages (JSON text frames). Pane bytes travel in binary frames. */
export type ServerMessage =
  | { type: 'snapshot'; cols: number; rows: number; cursor: { x: number; y: number }; alternate: boolean; bytes: number }
  | { type: 'state'; cols: number; rows: number; alternate: boolean; viewers: number }
  | { type: 'closed'; reason: string }
  | { type: 'error'; code: string; message: string };

/**
 * Frames pane bytes for the viewers' wire once (a WebSocket binary frame, in practice): the parts, in
 * order, copied once into one Buffer that ends with them.
 */
export type Framer = (parts: readonly Buffer[]) => Buffer;

/** Where a viewer is in its life: waiting for its snapshot (output is in it), then live. */
type Phase = 'snapshot' | 'live';

class PaneWatch {
  readonly viewers = new Map<Viewer, Phase>();
  readonly client: ControlClient;
  info: PaneInfo | null = null;
  /** Output lines read in one go from tmux, sent on as one chunk (see output). */
  private pending: Buffer[] = [];

  constructor(
    readonly target: PaneTarget,
    readonly log: OutputLog,
    private readonly hub: PaneHub,
  ) {
    this.client = new ControlClient(target, {
      output: (pane, bytes) => {
        if (pane === target.pane) this.output(bytes);
      },
      paused: (pane) => {
        if (pane !== target.pane) return;
        // tmux dropped output for us while paused: resume it, and every viewer starts over from a snapshot.
        void this.client.command(`refresh-client -A '${pane}:continue'`).catch(() => {});
        for (const v of this.viewers.keys()) this.snapshot(v);
      },
      layout: () => this.refreshState(),
      exit: (reason) => {
        this.flush();
        this.hub.ended(this, reason);
      },
    });
  }

  /**
   * One read from tmux holds many `%output` lines: they are gathered and sent on together once the read
   * is handled (a microtask), as one chunk, framed once and written as the same bytes to every live
   * viewer. Anything that changes who is live, or sends a viewer a message, flushes first, so the order
   * of bytes and messages stays exactly the order tmux gave.
   */
  private output(bytes: Buffer): void {
    this.pending.push(bytes);
    if (this.pending.length === 1) queueMicrotask(() => this.flush());
  }

  flush(): void {
    if (this.pending.length === 0) return;
    const parts = this.pending;
    this.pending = [];
    // Framed with the parts copied once; the plain bytes are the frame's tail, not another copy.
    const length = parts.reduce((n, b) => n + b.length, 0);
    const frame = this.hub.framer?.(parts);
    const bytes = frame ? frame.subarray(frame.length - length) : parts.length === 1 ? parts[0]! : Buffer.concat(parts, length);
    this.log.append(bytes);
    for (const [viewer, phase] of this.viewers) {
      if (phase !== 'live') continue;
      if (viewer.sendFramed && frame) viewer.sendFramed(frame);
      else viewer.sendBytes(bytes);
      if (viewer.buffered() > this.hub.viewerQueueBytes) this.hub.drop(viewer, CLOSE.slow, 'slow viewer: too far behind the pane');
    }
  }

  /**
   * Sends `viewer` the pane as it is now, then live bytes from exactly that point: the capture and the
   * cursor come from one command line (one tmux pass), and its answer is handled in stream order, so
   * output before it is in the snapshot and output after it is streamed.
   */
  snapshot(viewer: Viewer): void {
    this.flush();
    this.viewers.set(viewer, 'snapshot');
    let screen: Buffer[] = [];
    this.client.send(`capture-pane -p -e -t ${this.target.pane} ; display-message -p -t ${this.target.pane} '${PANE_FORMAT}'`, [
      (err, lines) => {
        if (!err) screen = lines;
      },
      (err, lines) => {
        if (this.viewers.get(viewer) !== 'snapshot') return;
        // Output read before this answer is in the capture: it goes to the viewers already live, not this one.
        this.flush();
        if (err) return this.hub.drop(viewer, CLOSE.failed, `cannot capture the pane: ${err.message}`);
        const info = parsePaneInfo(lines[0]?.toString() ?? '');
        this.info = info;
        const bytes = snapshotBytes(screen.slice(0, info.rows), info);
        viewer.sendJson({ type: 'snapshot', cols: info.cols, rows: info.rows, cursor: info.cursor, alternate: info.alternate, bytes: bytes.length } satisfies ServerMessage);
        viewer.sendBytes(bytes);
        viewer.sendJson(this.state(info));
        this.viewers.set(viewer, 'live');
      },
    ]);
  }

  private state(info: PaneInfo): ServerMessage {
    return { type: 'state', cols: info.cols, rows: info.rows, alternate: info.alternate, viewers: this.viewers.size };
  }

  /** Tells every live viewer the pane's size after a layout change. */
  refreshState(): void {
    this.client.send(`display-message -p -t ${this.target.pane} '${PANE_FORMAT}'`, [
      (err, lines) => {
        if (err) return;
        this.info = parsePaneInfo(lines[0]?.toString() ?? '');
        this.flush();
        for (const [v, phase] of this.viewers) if (phase === 'live') v.sendJson(this.state(this.info));
      },
    ]);
  }
}

/** A terminal stream that paints a captured screen on a fresh terminal and puts the cursor back. */
export function snapshotBytes(lines: readonly Buffer[], info: PaneInfo): Buffer {
  const parts: Buffer[] = [Buffer.from('\x1b[0m\x1b[H\x1b[2J')];
  lines.forEach((line, i) => {
    if (i > 0) parts.push(Buffer.from('\x1b[0m\r\n'));
    parts.push(line);
  });
  parts.push(Buffer.from(`\x1b[0m\x1b[${info.cursor.y + 1};${info.cursor.x + 1}H`));
  return Buffer.concat(parts);
}

/**
 * The pane stream: ONE `tmux -C` control client per watched session, fanned out to every viewer. A new
 * viewer gets a snapshot first, then the pane's bytes. A viewer whose unread queue passes
 * `viewerQueueBytes` is dropped (close code 4001), so no viewer grows the server's memory; the control
 * client itself runs with tmux's `pause-after`, so a server that falls behind is paused by tmux instead
 * of buffered without end. The control client stops when the last viewer leaves. Each session keeps a
 * bounded output log, which outlives its watch.
 */
export class PaneHub {
  private readonly watches = new Map<string, PaneWatch>();
  private readonly byViewer = new Map<Viewer, PaneWatch>();
  private readonly logs = new Map<string, OutputLog>();

  constructor(
    readonly viewerQueueBytes: number = VIEWER_QUEUE_BYTES,
    private readonly maxLogs = 64,
    /** Frames output once for every viewer that takes framed bytes (`Viewer.sendFramed`). */
    readonly framer?: Framer,
  ) {}

  /** Adds a viewer to the session's stream, starting its control client if it is the first. */
  join(target: PaneTarget, viewer: Viewer): void {
    const key = keyOf(target);
    let watch = this.watches.get(key);
    if (!watch || !watch.client.alive) {
      watch = new PaneWatch(target, this.logFor(key), this);
      this.watches.set(key, watch);
    }
    this.byViewer.set(viewer, watch);
    watch.snapshot(viewer);
  }

  /** Removes a viewer (its socket closed); the last one out stops the control client. */
  leave(viewer: Viewer): void {
    const watch = this.byViewer.get(viewer);
    if (!watch) return;
    this.byViewer.delete(viewer);
    watch.viewers.delete(viewer);
    if (watch.viewers.size === 0) {
      watch.client.stop();
      if (this.watches.get(keyOf(watch.target)) === watch) this.watches.delete(keyOf(watch.target));
    }
  }

  /** Typed input from a viewer: the bytes exactly, through its session's control client, serialized with all other input. */
  input(lanes: InputLanes, viewer: Viewer, bytes: Buffer): Promise<void> {
    const watch = this.byViewer.get(viewer);
    if (!watch) return Promise.resolve();
    return sendBytes(lanes, watch.target, bytes, (line) => watch.client.command(line));
  }

  /** Resizes the session's window to a viewer's terminal (the control client's size drives it). */
  async resize(viewer: Viewer, cols: number, rows: number): Promise<void> {
    const watch = this.byViewer.get(viewer);
    if (watch) await watch.client.command(`refresh-client -C ${cols}x${rows}`);
  }

  /** Drops a viewer with a close code that says why. */
  drop(viewer: Viewer, code: number, reason: string): void {
    this.leave(viewer);
    if (code !== CLOSE.slow) viewer.sendJson({ type: 'closed', reason } satisfies ServerMessage);
    viewer.close(code, reason);
  }

  /** The session's control client ended: every viewer is told, then closed. */
  ended(watch: PaneWatch, reason: string): void {
    if (this.watches.get(keyOf(watch.target)) === watch) this.watches.delete(keyOf(watch.target));
    for (const viewer of [...watch.viewers.keys()]) {
      this.byViewer.delete(viewer);
      viewer.sendJson({ type: 'closed', reason: `session ended: ${reason}` } satisfies ServerMessage);
      viewer.close(CLOSE.ended, 'session ended');
    }
    watch.viewers.clear();
  }

  /** Closes every viewer (a drain before a reload: 1012, reconnect). */
  closeAll(code: number, reason: string): void {
    for (const viewer of [...this.byViewer.keys()]) this.drop(viewer, code, reason);
  }

  /** The session's output log, if the server has watched it. */
  log(target: PaneTarget): OutputLog | undefined {
    return this.logs.get(keyOf(target));
  }

  /** Counts, for tests and benchmarks. */
  stats(): { watches: number; viewers: number; controlPids: number[] } {
    return { watches: this.watches.size, viewers: this.byViewer.size, controlPids: [...this.watches.values()].map((w) => w.client.pid ?? 0) };
  }

  private logFor(key: string): OutputLog {
    let log = this.logs.get(key);
    if (log) {
      this.logs.delete(key);
    } else {
      log = new OutputLog();
      if (this.logs.size >= this.maxLogs) this.logs.delete(this.logs.keys().next().value!);
    }
    this.logs.set(key, log);
    return log;
  }
}

const keyOf = (t: PaneTarget) => `${t.socket}\u0000${t.session}`;
