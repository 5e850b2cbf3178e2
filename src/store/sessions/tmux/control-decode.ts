/**
 * tmux control mode's wire format, as bytes. tmux writes a pane's output as
 * `%output %<pane> <data>` (or, once `pause-after` is on, `%extended-output %<pane> <age> ... : <data>`)
 * where every byte below 0x20 and the backslash are written as `\ooo` (three octal digits) and every
 * other byte (UTF-8 lead and continuation bytes too) is written as itself. So a line is split on 0x0A
 * and decoded as bytes, never as a string: a UTF-8 sequence may be cut between two `%output` lines, and
 * only the viewer's terminal, which decodes a stream, may put it back together.
 */

const BACKSLASH = 0x5c;
const isOctal = (b: number | undefined) => b !== undefined && b >= 0x30 && b <= 0x37;

/** Decodes control mode's octal escapes (`\ooo`) in `data` back to the pane's raw bytes. */
export function decodeOctal(data: Uint8Array): Buffer {
  const first = data.indexOf(BACKSLASH);
  if (first < 0) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const out = Buffer.allocUnsafe(data.length);
  out.set(data.subarray(0, first), 0);
  let o = first;
  for (let i = first; i < data.length; i++) {
    const b = data[i]!;
    if (b === BACKSLASH && isOctal(data[i + 1]) && isOctal(data[i + 2]) && isOctal(data[i + 3])) {
      out[o++] = ((data[i + 1]! - 0x30) << 6) | ((data[i + 2]! - 0x30) << 3) | (data[i + 3]! - 0x30);
      i += 3;
    } else {
      out[o++] = b;
    }
  }
  return out.subarray(0, o);
}

/** Encodes bytes the way tmux's control mode does (what tests feed the decoder). */
export function encodeOctal(bytes: Uint8Array): Buffer {
  const parts: number[] = [];
  for (const b of bytes) {
    if (b < 0x20 || b === BACKSLASH) parts.push(BACKSLASH, 0x30 + (b >> 6), 0x30 + ((b >> 3) & 7), 0x30 + (b & 7));
    else parts.push(b);
  }
  return Buffer.from(parts);
}

/** One line of control mode output, classified. */
export type ControlLine =
  | { readonly kind: 'output'; readonly pane: string; readonly bytes: Buffer }
  | { readonly kind: 'begin' | 'end' | 'error'; readonly tag: string; readonly ours: boolean }
  | { readonly kind: 'pause' | 'continue'; readonly pane: string }
  | { readonly kind: 'exit'; readonly reason: string }
  /** A window's size or layout changed, or its active pane did (`@N`). */
  | { readonly kind: 'layout'; readonly window: string }
  /** A session was made or closed somewhere on the server. */
  | { readonly kind: 'sessions-changed' }
  /** A subscribed format's value changed for a pane (`%subscription-changed <name> $s @w <index> %p … : <value>`). */
  | { readonly kind: 'subscription'; readonly name: string; readonly pane: string; readonly value: string }
  /** This client is attached to a session now (`%session-changed $N <name>`). */
  | { readonly kind: 'session-changed' }
  /** A window (`@N`) closed, or was unlinked from this client's session (tmux also says so when only another session holding it closed). */
  | { readonly kind: 'window-close'; readonly window: string }
  | { readonly kind: 'other'; readonly line: Buffer };

const PREFIX = (s: string) => Buffer.from(s, 'latin1');
const OUTPUT = PREFIX('%output ');
const EXTENDED = PREFIX('%extended-output ');
const SEPARATOR = PREFIX(' : ');

const startsWith = (line: Buffer, prefix: Buffer) => line.length >= prefix.length && line.compare(prefix, 0, prefix.length, 0, prefix.length) === 0;

const NO_BYTES = Buffer.alloc(0);

/**
 * Classifies one line (without its newline). Output lines carry their decoded bytes, or none with
 * `bytes` false (a caller that only needs to know a pane wrote: nothing is decoded or searched past the pane id).
 */
export function parseControlLine(line: Buffer, bytes = true): ControlLine {
  if (startsWith(line, OUTPUT)) {
    const space = line.indexOf(0x20, OUTPUT.length);
    if (space > 0) return { kind: 'output', pane: line.toString('latin1', OUTPUT.length, space), bytes: bytes ? decodeOctal(line.subarray(space + 1)) : NO_BYTES };
  }
  if (startsWith(line, EXTENDED)) {
    const space = line.indexOf(0x20, EXTENDED.length);
    if (space > 0 && !bytes) return { kind: 'output', pane: line.toString('latin1', EXTENDED.length, space), bytes: NO_BYTES };
    const sep = line.indexOf(SEPARATOR, EXTENDED.length);
    if (space > 0 && sep > 0) return { kind: 'output', pane: line.toString('latin1', EXTENDED.length, space), bytes: decodeOctal(line.subarray(sep + SEPARATOR.length)) };
  }
  if (line[0] !== 0x25 /* % */) return { kind: 'other', line };
  const text = line.toString('latin1');
  const words = text.split(' ');
  switch (words[0]) {
    case '%begin':
    case '%end':
    case '%error':
      // `%begin <time> <number> <flags>`: flags 1 marks a command this client sent.
      return { kind: words[0].slice(1) as 'begin' | 'end' | 'error', tag: `${words[1]} ${words[2]}`, ours: words[3] === '1' };
    case '%pause':
      return { kind: 'pause', pane: words[1] ?? '' };
    case '%continue':
      return { kind: 'continue', pane: words[1] ?? '' };
    case '%exit':
      return { kind: 'exit', reason: words.slice(1).join(' ') };
    case '%layout-change':
    case '%window-pane-changed':
      return { kind: 'layout', window: words[1] ?? '' };
    case '%sessions-changed':
      return { kind: 'sessions-changed' };
    case '%session-changed':
      return { kind: 'session-changed' };
    case '%subscription-changed': {
      const sep = text.indexOf(' : ');
      return { kind: 'subscription', name: words[1] ?? '', pane: words.find((w) => w.startsWith('%') && w !== words[0]) ?? '', value: sep > 0 ? text.slice(sep + 3) : '' };
    }
    case '%window-close':
    case '%unlinked-window-close':
      return { kind: 'window-close', window: words[1] ?? '' };
    default:
      return { kind: 'other', line };
  }
}

/** Splits a byte stream into lines at 0x0A, holding a partial line until its end arrives. */
export class LineSplitter {
  private rest: Buffer | null = null;

  /** Feeds one chunk and calls `onLine` for each whole line in it (without the newline). */
  push(chunk: Buffer, onLine: (line: Buffer) => void): void {
    let start = 0;
    let nl = chunk.indexOf(0x0a);
    if (this.rest && nl >= 0) {
      onLine(Buffer.concat([this.rest, chunk.subarray(0, nl)]));
      this.rest = null;
      start = nl + 1;
      nl = chunk.indexOf(0x0a, start);
    }
    while (nl >= 0) {
      onLine(chunk.subarray(start, nl));
      start = nl + 1;
      nl = chunk.indexOf(0x0a, start);
    }
    if (start < chunk.length) this.rest = this.rest ? Buffer.concat([this.rest, chunk.subarray(start)]) : Buffer.from(chunk.subarray(start));
  }
}
