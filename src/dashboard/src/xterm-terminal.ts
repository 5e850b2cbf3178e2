/**
 * The live terminal of a session page: xterm.js over the pane WebSocket (`/api/sessions/:id/socket`).
 * This module is loaded lazily by the session page, so xterm.js (most of the page's weight) is its own
 * chunk (`xterm-terminal-<hash>.js`) and the other views never download it.
 *
 * Protocol (README, "The pane stream"): a JSON `snapshot` message, then a binary frame that paints the
 * screen, then live binary bytes; JSON `state` when the pane's size changes, `closed` before the server
 * ends the socket, `error` for a refused message. The client sends JSON `input` and `resize`.
 */
import { signal } from '@preact/signals';
import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import { cspSafeStyles } from './csp-styles';

/** The pane link as the page shows it. `ended`: the session's pane is gone (close code 1000); no retry. */
export type PaneLinkState = 'connecting' | 'live' | 'reconnecting' | 'ended';

export const PANE_BACKOFF_FIRST_MS = 250;

const FONT_SIZE = 13;
/**
 * The smallest font a viewer that only looks shrinks to so the pane's width fits: 12 px on a desktop (the
 * size of a code listing's small print), 11 px in a frame narrower than NARROW_FRAME_PX (a phone, read closer
 * up). Below that the text stops being readable, so a wider pane scrolls sideways inside its frame instead
 * (the page itself never does).
 */
const MIN_FONT_SIZE = 12;
const MIN_FONT_SIZE_NARROW = 11;
const NARROW_FRAME_PX = 600;
export const PANE_BACKOFF_MAX_MS = 8_000;

/**
 * What the terminal last has to tell its viewer, as facts the page words (error-words.ts): a refusal the
 * server sent (its code and API message), or the close code of a connection that closed.
 */
export type PaneNotice = { readonly refused: { readonly code: string; readonly message: string } } | { readonly closed: number };

/** Close codes of the pane stream (`src/store/sessions/tmux/pane-stream.ts`). */
const ENDED = 1000;

export interface PaneTerminalOptions {
  /** The socket's http(s) URL; turned into ws(s). */
  readonly url: string;
  readonly readOnly: boolean;
  /** Files pasted or dropped on the terminal (the page uploads them and types their paths). */
  readonly onFiles: (files: File[]) => void;
}

/**
 * One terminal bound to one session's pane. It reconnects by itself after any drop that is not the end
 * of the session (a backend hot reload closes with 1012, a slow viewer is dropped with 4001, a network
 * blip gives 1006), after a bounded exponential backoff (250 ms doubling to 8 s, with jitter), and gets a
 * fresh snapshot from the server each time. `state` says where it is, for the page to show.
 */
export class PaneTerminal {
  readonly state = signal<PaneLinkState>('connecting');
  /** The last thing the user should hear about the link (a refusal, why it closed); cleared by a fresh screen. */
  readonly notice = signal<PaneNotice | null>(null);
  /** The pane's size, as the server last reported it. */
  readonly size = signal<{ cols: number; rows: number } | null>(null);
  /** Whether the pane is wider than this viewer's frame at a readable size (its frame scrolls sideways). */
  readonly scrolls = signal(false);
  readonly term: Terminal;
  private readonly fit = new FitAddon();
  private readonly resizeObserver: ResizeObserver;
  private readonly unmirror: () => void;
  private ws: WebSocket | null = null;
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private fitTimer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  private readOnly: boolean;
  /**
   * Whether this viewer drives the pane's size: only once it typed (or sent keys). Until then it shows the
   * pane at the size others gave it, scaled to fit its frame, so a phone that merely looks never shrinks
   * everyone's terminal.
   */
  private driving = false;

  constructor(
    private readonly frame: HTMLElement,
    private readonly opts: PaneTerminalOptions,
  ) {
    this.readOnly = opts.readOnly;
    this.term = new Terminal({ convertEol: false, scrollback: 5_000, fontSize: FONT_SIZE, fontFamily: "ui-monospace, 'SFMono-Regular', Menlo, Consolas, monospace", disableStdin: opts.readOnly, cursorBlink: !opts.readOnly });
    this.term.loadAddon(this.fit);
    // Opened inside cspSafeStyles: xterm's own styles go through the CSSOM, so the CSP refuses nothing.
    this.unmirror = cspSafeStyles(() => this.term.open(frame)).dispose;
    this.term.onData((data) => {
      this.claim();
      this.sendJson({ type: 'input', data });
    });
    // Bytes xterm produces outside UTF-8 (some mouse reports) go as a binary frame, sent to the pane exactly.
    this.term.onBinary((data) => this.send(Uint8Array.from(data, (c) => c.charCodeAt(0) & 0xff)));
    // A pasted or dropped file: capture it before xterm turns the clipboard's text into keystrokes.
    frame.addEventListener('paste', (e) => this.files(e, e.clipboardData?.files), true);
    frame.addEventListener('dragover', (e) => e.dataTransfer?.types.includes('Files') && e.preventDefault());
    frame.addEventListener('drop', (e) => this.files(e, e.dataTransfer?.files), true);
    this.resizeObserver = new ResizeObserver(() => {
      clearTimeout(this.fitTimer);
      this.fitTimer = setTimeout(() => (this.proposeSize(), this.fitView()), 100);
    });
    this.resizeObserver.observe(frame);
    this.markWatching();
  }

  start(): this {
    this.open();
    return this;
  }

  /** Reopens the socket in the other mode; a read-only viewer streams but its input and resizes are refused. */
  setReadOnly(readOnly: boolean): void {
    if (readOnly === this.readOnly) return;
    this.readOnly = readOnly;
    this.term.options.disableStdin = readOnly;
    this.term.options.cursorBlink = !readOnly;
    clearTimeout(this.timer);
    const old = this.ws;
    this.ws = null;
    // Not live until the new socket's snapshot: keys typed in between would go nowhere while the page said 'live'.
    this.state.value = 'connecting';
    old?.close(1000, 'switching mode');
    this.attempt = 0;
    this.open();
  }

  /** Types `text` into the pane, as if it were typed on the keyboard; false when nothing was (read-only, not connected). */
  type(text: string): boolean {
    // A read-only socket refuses input: it is not sent, so the caller never says it was typed.
    if (this.readOnly) return false;
    this.claim();
    return this.sendJson({ type: 'input', data: text });
  }

  /** This viewer is the one typing: from now on the pane takes its size. */
  claim(): void {
    if (this.driving || this.readOnly) return;
    this.driving = true;
    this.term.options.fontSize = FONT_SIZE;
    this.scrolls.value = false;
    this.markWatching();
    this.proposeSize();
  }

  focus(): void {
    this.term.focus();
  }

  dispose(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    clearTimeout(this.fitTimer);
    this.resizeObserver.disconnect();
    this.ws?.close(1000, 'page left');
    this.term.dispose();
    this.unmirror();
  }

  private files(e: Event, list: FileList | null | undefined): void {
    if (!list?.length) return;
    e.preventDefault();
    e.stopPropagation();
    this.opts.onFiles(Array.from(list));
  }

  private open(): void {
    if (this.stopped) return;
    const u = new URL(this.opts.url, location.href);
    u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
    if (this.readOnly) u.searchParams.set('mode', 'read');
    const ws = new WebSocket(u.href);
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    let sized = false;
    ws.onmessage = (e: MessageEvent<ArrayBuffer | string>) => {
      if (this.ws !== ws) return;
      if (typeof e.data !== 'string') return this.term.write(new Uint8Array(e.data));
      let msg: { type?: string; cols?: number; rows?: number; reason?: string; code?: string; message?: string };
      try {
        msg = JSON.parse(e.data);
      } catch {
        return;
      }
      if (msg.type === 'snapshot') {
        // A fresh screen follows: start from a clean terminal of the pane's size.
        this.term.reset();
        this.adopt(msg.cols, msg.rows);
        this.attempt = 0;
        this.state.value = 'live';
        this.notice.value = null;
      } else if (msg.type === 'state') {
        this.adopt(msg.cols, msg.rows);
        // Propose our size once per connection (and on each resize of the frame), never in answer to
        // every size change: two viewers of different sizes would otherwise resize the pane back and forth.
        if (!sized) {
          sized = true;
          this.proposeSize();
        }
      } else if (msg.type === 'error') {
        this.notice.value = { refused: { code: msg.code ?? 'INTERNAL', message: msg.message ?? '' } };
      }
      // `closed` comes before every close (a reload's too): the close code that follows says what happened.
    };
    ws.onclose = (e) => {
      if (this.ws !== ws || this.stopped) return;
      this.ws = null;
      this.notice.value = { closed: e.code };
      if (e.code === ENDED) {
        this.state.value = 'ended';
        return;
      }
      this.state.value = 'reconnecting';
      const wait = Math.min(PANE_BACKOFF_MAX_MS, PANE_BACKOFF_FIRST_MS * 2 ** this.attempt++);
      this.timer = setTimeout(() => this.open(), wait / 2 + (Math.random() * wait) / 2);
    };
  }

  /** Shows the pane at its own size, so what tmux draws lines up. */
  private adopt(cols: number | undefined, rows: number | undefined): void {
    if (!cols || !rows) return;
    this.size.value = { cols, rows };
    if (cols !== this.term.cols || rows !== this.term.rows) this.term.resize(cols, rows);
    this.fitView();
  }

  /**
   * The frame of a viewer that only looks grows to the pane's height and scrolls sideways (class `watching`,
   * sessions.css): the whole pane, bottom row included, at a readable size. A typist's frame has a fixed
   * box, which the pane is sized to.
   */
  private markWatching(): void {
    this.frame.classList.toggle('watching', !this.driving);
  }

  /**
   * A viewer that does not drive the size shows the pane's columns within its frame by a smaller font
   * (down to a readable floor; below it the frame scrolls sideways), never by resizing the pane.
   */
  private fitView(): void {
    if (this.driving) return;
    const d = this.fit.proposeDimensions();
    const cols = this.size.value?.cols;
    if (!d || !cols || !Number.isFinite(d.cols)) return;
    const now = this.term.options.fontSize ?? FONT_SIZE;
    const floor = this.frame.clientWidth < NARROW_FRAME_PX ? MIN_FONT_SIZE_NARROW : MIN_FONT_SIZE;
    // proposeDimensions answers for the current font: scale to what fits `cols` columns.
    const wanted = Math.floor((now * d.cols) / cols);
    const fitting = Math.max(floor, Math.min(FONT_SIZE, wanted));
    if (fitting !== now) this.term.options.fontSize = fitting;
    this.scrolls.value = wanted < floor;
  }

  /** A writable viewer asks the server to size the pane to what its frame can show. */
  private proposeSize(): void {
    if (this.readOnly || !this.driving || this.state.value !== 'live') return;
    const d = this.fit.proposeDimensions();
    if (!d || !Number.isFinite(d.cols) || !Number.isFinite(d.rows)) return;
    const cols = Math.max(20, Math.min(1000, d.cols));
    const rows = Math.max(5, Math.min(1000, d.rows));
    const now = this.size.value;
    if (now && now.cols === cols && now.rows === rows) return;
    this.sendJson({ type: 'resize', cols, rows });
  }

  private sendJson(msg: object): boolean {
    return this.send(JSON.stringify(msg));
  }

  private send(data: string | Uint8Array): boolean {
    if (this.ws?.readyState !== WebSocket.OPEN) return false;
    this.ws.send(data);
    return true;
  }
}
