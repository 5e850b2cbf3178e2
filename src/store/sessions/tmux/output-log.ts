/**
 * The server's own bounded log of what a pane printed (DESIGN §9: a TUI on the alternate screen leaves
 * no tmux scrollback). A ring of chunks: past `limit` bytes the oldest chunks go, and the text view
 * starts at a character boundary, never inside a UTF-8 sequence.
 */
export class OutputLog {
  private chunks: Buffer[] = [];
  private bytes = 0;

  constructor(readonly limit: number = 256 << 10) {}

  get size(): number {
    return this.bytes;
  }

  append(bytes: Buffer): void {
    if (bytes.length === 0) return;
    // Copied: the chunk may be a view into a larger pipe buffer that should not stay alive for it.
    this.chunks.push(Buffer.from(bytes));
    this.bytes += bytes.length;
    while (this.bytes > this.limit && this.chunks.length > 1) this.bytes -= this.chunks.shift()!.length;
    if (this.bytes > this.limit) {
      const only = this.chunks[0]!;
      this.chunks[0] = only.subarray(only.length - this.limit);
      this.bytes = this.limit;
    }
  }

  /** The log's bytes, starting at the first UTF-8 character boundary. */
  contents(): Buffer {
    const all = Buffer.concat(this.chunks);
    let start = 0;
    while (start < all.length && start < 4 && (all[start]! & 0xc0) === 0x80) start++;
    return all.subarray(start);
  }

  /** The last `lines` lines as text, escape sequences removed unless `ansi`. */
  tail(lines: number, ansi = false): string {
    let text = this.contents().toString('utf8');
    if (!ansi) text = stripAnsi(text);
    const all = text.split(/\r?\n/);
    return all.slice(-Math.max(1, lines)).join('\n');
  }
}

/** Removes CSI, OSC and two-byte escape sequences and stray carriage returns. */
export function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|\r(?!\n)/g, '');
}
