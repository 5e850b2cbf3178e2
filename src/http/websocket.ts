import type { Server } from 'node:http';
import { createNodeWebSocket, type NodeWebSocket } from '@hono/node-ws';
import type { Hono } from 'hono';

interface AppSockets {
  readonly ws: NodeWebSocket;
  /** What to do to every live stream when the server goes away (a reload's drain). */
  readonly closers: Array<(code: number, reason: string) => void>;
}

const registry = new WeakMap<Hono, AppSockets>();

/** WebSocket support for `app` (@hono/node-ws): its `upgradeWebSocket` for routes, remembered for `injectWebSockets`. */
export function appWebSockets(app: Hono): AppSockets {
  let sockets = registry.get(app);
  if (!sockets) {
    sockets = { ws: createNodeWebSocket({ app }), closers: [] };
    registry.set(app, sockets);
  }
  return sockets;
}

/** Lets `server` upgrade to the WebSocket routes of `app` (a no-op for an app with none). */
export function injectWebSockets(app: Hono, server: Server): void {
  registry.get(app)?.ws.injectWebSocket(server);
}

/**
 * Closes every WebSocket of `app` (1012 by default: the server is restarting, reconnect). Upgraded
 * sockets are no longer the HTTP server's, so `closeAllConnections()` never reaches them.
 */
export function closeWebSockets(app: Hono, code = 1012, reason = 'server restarting'): void {
  const sockets = registry.get(app);
  if (!sockets) return;
  for (const close of sockets.closers) close(code, reason);
  for (const client of sockets.ws.wss.clients) client.close(code, reason);
}
