/** How often open exchanges are checked against their login session while any is open. */
export const SWEEP_MS = 250;

/**
 * Every proxied exchange in flight (an SSE stream, a pane WebSocket, a plain request) that a login
 * session authorized, by that session's id. A session that ends — logout, a new admin password, expiry,
 * a rotation — ends what it opened: a sweep asks `live` about each session while anything is open, so
 * the rule holds however the session came to end, within SWEEP_MS.
 */
export class OpenStreams {
  private readonly bySession = new Map<string, Set<() => void>>();
  private timer: NodeJS.Timeout | undefined;

  /** `live(sessionId)`: whether that session still holds; asked only while something is open. */
  constructor(private readonly live: (sessionId: string) => boolean) {}

  /** Registers `end` under `sessionId`; returns its removal (call it when the exchange is over). */
  add(sessionId: string, end: () => void): () => void {
    let set = this.bySession.get(sessionId);
    if (!set) this.bySession.set(sessionId, (set = new Set()));
    set.add(end);
    if (!this.timer) {
      this.timer = setInterval(() => this.sweep(), SWEEP_MS);
      this.timer.unref();
    }
    return () => {
      set.delete(end);
      if (set.size === 0 && this.bySession.get(sessionId) === set) this.bySession.delete(sessionId);
      if (this.bySession.size === 0) this.stop();
    };
  }

  /** Open exchanges, for tests and figures. */
  get size(): number {
    let n = 0;
    for (const set of this.bySession.values()) n += set.size;
    return n;
  }

  /** Ends every exchange of a session that no longer holds. */
  sweep(): void {
    for (const [id, set] of [...this.bySession]) {
      if (this.live(id)) continue;
      this.bySession.delete(id);
      for (const end of set) end();
    }
    if (this.bySession.size === 0) this.stop();
  }

  private stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
