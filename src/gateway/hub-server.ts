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

  if (!tls) return { server: http, state, close: () => closeServer(http) };

  const front = net.createServer((socket) => {
    // Until its first byte arrives the socket is nobody's: it gets the reaper's header deadline here.
    const timer = setTimeout(() => socket.destroy(), reaper.headerMs);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
    socket.once('data', (chunk: Buffer) => {
      clearTimeout(timer);
      socket.pause();
      if (chunk[0] === 0x16) {
        socket.unshift(chunk);
        http.emit('connection', socket);
        socket.resume();
      } else {
        refuse(socket, 400, 'Bad Request', 'this port speaks https only; use an https:// URL');
      }
    });
  });
  return {
    server: front,
    state,
    close: async () => {
      await Promise.all([closeServer(front), closeServer(http)]);
    },
  };
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) {
      (server as Server & { closeAllConnections?: () => void }).closeAllConnections?.();
      return resolve();
    }
    server.close(() => resolve());
    (server as Server & { closeAllConnections?: () => void }).closeAllConnections?.();
  });
}
