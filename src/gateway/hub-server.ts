import type { IncomingMessage } from 'node:http';
import net, { type Server, type Socket } from 'node:net';
import type { ServerOptions as TlsOptions } from 'node:https';
import { createReapedServer } from '../http/create-server.js';
import { reaperOptions, type ReaperOptions } from '../http/reaper.js';
import { onlineRecord } from '../store/host/project-list.js';
import { GatewayState, type GatewayOptions } from './gateway-state.js';
import { hubApp, splitProxyPath } from './hub-app.js';
import { crossSiteRefusal } from './request-guard.js';
import { proxyUpgrade } from './upstream.js';

export interface HubServer {
  /** The server to bind (a plaintext-sniffing front under TLS). */
  readonly server: Server;
  readonly state: GatewayState;
  close(): Promise<void>;
}

/** A raw HTTP refusal on a socket that never reached the app (an upgrade, a plaintext client on TLS). */
function refuse(socket: Socket, status: number, reason: string, message: string): void {
  const body = JSON.stringify({ error: { code: reason, message } });
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/**
 * The gateway's server: the hub app on a reaped HTTP(S) server, with WebSocket upgrades on `/p/:id/*`
 * piped to the backend after the same cross-site and gate checks as any request. With TLS, the one port
 * speaks HTTPS only: a client whose first byte is not a TLS handshake gets an HTTP 400 naming https,
 * then the connection closes, and nothing else.
 */
export function createHubServer(opts: GatewayOptions, tls?: TlsOptions, reaper: ReaperOptions = reaperOptions()): HubServer {
  const state = new GatewayState(opts);
  const app = hubApp(state);
  const http = createReapedServer(app.fetch as (r: Request) => Promise<Response>, reaper, tls);

  http.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    void (async () => {
      const refusal = crossSiteRefusal(
        { method: req.method ?? 'GET', host: req.headers.host, origin: req.headers.origin, secFetchSite: req.headers['sec-fetch-site'] as string | undefined, upgrade: true },
        state.allowedHosts(),
      );
      if (refusal) return refuse(socket, 403, 'Forbidden', refusal);
      const target = splitProxyPath(req.url ?? '');
      if (!target || (opts.only && target.id !== opts.only)) return refuse(socket, 404, 'Not Found', 'WebSockets are proxied only under /p/<id>/');
      const refused = state.projectRefusal(state.caller(req.socket.remoteAddress, req.headers.cookie), target.id);
      if (refused) return refuse(socket, refused, refused === 401 ? 'Unauthorized' : 'Forbidden', 'log in first (POST /auth/login)');
      const record = await onlineRecord(opts.home, target.id);
      if (!record) return refuse(socket, 404, 'Not Found', `project ${target.id} has no running backend`);
      proxyUpgrade(req, socket, head, record, target.path, `/p/${target.id}`, state.ownCookies);
    })().catch(() => socket.destroy());
  });

  if (!tls) {
    const open = track(http);
    return { server: http, state, close: () => closeServer(http, open) };
  }

  // Paused on connect: the first byte is peeked with read(1) and put back, so TLS takes the socket whole.
  const front = net.createServer({ pauseOnConnect: true }, (socket) => {
    // Until its first byte arrives the socket is nobody's: it gets the reaper's header deadline here.
    const timer = setTimeout(() => socket.destroy(), reaper.headerMs);
    timer.unref();
    const onError = () => socket.destroy();
    socket.on('error', onError);
    const sniff = () => {
      const first = socket.read(1) as Buffer | null;
      if (first === null) return void socket.once('readable', sniff);
      clearTimeout(timer);
      socket.off('error', onError);
      socket.unshift(first);
      if (first[0] === 0x16) http.emit('connection', socket);
      else refuse(socket, 400, 'Bad Request', 'this port speaks https only; use an https:// URL');
    };
    sniff();
  });
  const open = track(front);
  return { server: front, state, close: () => closeServer(front, open) };
}

/** Every socket the server accepted and still open (upgraded WebSockets included). */
function track(server: Server): Set<Socket> {
  const open = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    open.add(s);
    s.once('close', () => open.delete(s));
  });
  return open;
}

/** Stops listening and ends every open connection, long-lived streams and WebSockets included. */
function closeServer(server: Server, open: Set<Socket>): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) resolve();
    else server.close(() => resolve());
    for (const s of open) s.destroy();
  });
}
