import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';

export interface ReaperOptions {
  /** A socket that has not completed a request by then is destroyed. */
  readonly headerMs: number;
  /** A keep-alive socket idle this long after its last response is destroyed. */
  readonly idleMs: number;
}

const positive = (s: string | undefined) => {
  const n = Number(s);
  return Number.isFinite(n) && n > 0 ? n : undefined;
};

/** ~30 s and ~15 s (spec §8), tunable by TRELLIS_REAP_HEADER_MS and TRELLIS_REAP_IDLE_MS. */
export const reaperOptions = (env: NodeJS.ProcessEnv = process.env): ReaperOptions => ({
  headerMs: positive(env.TRELLIS_REAP_HEADER_MS) ?? 30_000,
  idleMs: positive(env.TRELLIS_REAP_IDLE_MS) ?? 15_000,
});

/**
 * The header deadline of a socket that no HTTP server watches yet (a raw socket before its TLS
 * handshake, or before its first byte is sniffed): destroyed at `at` unless disarmed first. The one
 * place a header deadline is armed outside installReaper's own watch.
 */
export function headerDeadline(socket: Socket, opts: ReaperOptions): { readonly at: number; disarm(): void } {
  const timer = setTimeout(() => socket.destroy(), opts.headerMs);
  timer.unref();
  return { at: Date.now() + opts.headerMs, disarm: () => clearTimeout(timer) };
}

interface Watch {
  timer: NodeJS.Timeout | undefined;
  /** Requests received on this socket whose responses have not finished. */
  inFlight: number;
  /** An upgraded socket (WebSocket) is never reaped. */
  exempt: boolean;
}

/**
 * The single owner of abandoned-socket deadlines (spec §1.1 rule 8), installed at every HTTP server
 * creation site. It disables Node's own header and keep-alive timeouts (the request timeout keeps its
 * default) and instead:
 *   - arms a header deadline when a socket is born;
 *   - disarms it while any request on the socket is in flight, so a slow build or an SSE stream is never
 *     cut, however long it runs;
 *   - arms the idle deadline when the last in-flight response ends, and tells the client (`Keep-Alive`);
 *   - exempts an upgraded socket (WebSocket) for its whole life.
 * On a TLS server the deadline lives on the TLS socket that 'request' and 'upgrade' report: the raw
 * socket's header deadline is handed over at the handshake, matched by the peer's address:port.
 */
export function installReaper(server: HttpServer | HttpsServer, opts: ReaperOptions = reaperOptions()): void {
  server.headersTimeout = 0;
  server.keepAliveTimeout = 0;
  const watches = new WeakMap<Socket, Watch>();
  const tls = 'setSecureContext' in server;
  /** Raw sockets of a TLS server waiting for their handshake, by peer address:port. */
  const pending = new Map<string, { socket: Socket; deadline: ReturnType<typeof headerDeadline> }>();
  const peer = (s: Socket) => `${s.remoteAddress}:${s.remotePort}`;

  const arm = (socket: Socket, ms: number) => {
    const w = watches.get(socket);
    if (!w || w.exempt) return;
    clearTimeout(w.timer);
    w.timer = setTimeout(() => socket.destroy(), Math.max(0, ms));
    w.timer.unref();
  };
  const disarm = (socket: Socket) => {
    const w = watches.get(socket);
    if (w) clearTimeout(w.timer);
  };
  const track = (socket: Socket, ms: number) => {
    watches.set(socket, { timer: undefined, inFlight: 0, exempt: false });
    arm(socket, ms);
    socket.once('close', () => disarm(socket));
  };

  server.on('connection', (raw: Socket) => {
    if (!tls) return track(raw, opts.headerMs);
    // Before the handshake there is only the raw socket: it keeps its own header deadline.
    const key = peer(raw);
    const deadline = headerDeadline(raw, opts);
    pending.set(key, { socket: raw, deadline });
    raw.once('close', () => {
      deadline.disarm();
      if (pending.get(key)?.socket === raw) pending.delete(key);
    });
  });

  if (tls) {
    server.on('secureConnection', (socket: TLSSocket) => {
      const key = peer(socket);
      const handed = pending.get(key);
      pending.delete(key);
      handed?.deadline.disarm();
      // What is left of the raw socket's header deadline moves to the TLS socket.
      track(socket, handed ? handed.deadline.at - Date.now() : opts.headerMs);
    });
  }

  // Prepended: the app's own listener may answer synchronously, and the Keep-Alive header must be set first.
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    const w = watches.get(socket);
    if (!w) return;
    w.inFlight++;
    disarm(socket);
    if (!res.headersSent) res.setHeader('Keep-Alive', `timeout=${Math.max(1, Math.floor(opts.idleMs / 1000))}`);
    let done = false;
    const end = () => {
      if (done) return;
      done = true;
      w.inFlight--;
      if (w.inFlight === 0 && !socket.destroyed) arm(socket, opts.idleMs);
    };
    res.once('finish', end);
    res.once('close', end);
  });

  server.on('upgrade', (req: IncomingMessage) => {
    const w = watches.get(req.socket);
    if (w) {
      w.exempt = true;
      clearTimeout(w.timer);
    }
  });
}
