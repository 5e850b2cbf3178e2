import { EventEmitter } from 'node:events';
import type { Server } from 'node:http';
import type { NodeWebSocket } from '@hono/node-ws';
import type { Context, Hono, MiddlewareHandler } from 'hono';
import type { WSEvents } from 'hono/ws';
import type { WebSocket } from 'ws';

/** A route's WebSocket handlers, made per connection from its request context. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type CreateEvents = (c: Context<any>) => WSEvents<WebSocket> | Promise<WSEvents<WebSocket>>;

export interface AppSockets {
  /** @hono/node-ws's `upgradeWebSocket`, for routes. */
  readonly upgradeWebSocket: (createEvents: CreateEvents) => MiddlewareHandler;
  /** What to do to every live stream when the server goes away (a reload's drain). */
  readonly closers: Array<(code: number, reason: string) => void>;
}

interface Registered extends AppSockets {
  readonly load: () => Promise<NodeWebSocket>;
  readonly relay: EventEmitter;
  loaded?: NodeWebSocket;
}

const registry = new WeakMap<Hono, Registered>();

/**
 * WebSocket support for `app` (@hono/node-ws over `ws`), loaded on the first upgrade: a child that
 * never streams never pays for it, and its boot (which a reload waits on) stays as short as before.
 */
export function appWebSockets(app: Hono): AppSockets {
  const known = registry.get(app);
  if (known) return known;
  const relay = new EventEmitter();
  let loading: Promise<NodeWebSocket> | undefined;
  const reg: Registered = {
    relay,
    closers: [],
    load: () =>
      (loading ??= import('@hono/node-ws').then(({ createNodeWebSocket }) => {
        const nws = createNodeWebSocket({ app });
        // node-ws listens for 'upgrade' on what it is given: the relay, fed by the real server below.
        nws.injectWebSocket(relay as unknown as Server);
        reg.loaded = nws;
        return nws;
      })),
    upgradeWebSocket: (createEvents) => async (c, next) => ((await reg.load()).upgradeWebSocket as (e: CreateEvents) => MiddlewareHandler)(createEvents)(c, next),
  };
  registry.set(app, reg);
  return reg;
}

/** Lets `server` upgrade to the WebSocket routes of `app` (a no-op for an app with none). */
export function injectWebSockets(app: Hono, server: Server): void {
  const reg = registry.get(app);
  if (!reg) return;
  server.on('upgrade', (req, socket, head) => {
    void reg.load().then(
      () => reg.relay.emit('upgrade', req, socket, head),
      () => socket.destroy(),
    );
  });
}

/**
 * Closes every WebSocket of `app` (1012 by default: the server is restarting, reconnect). Upgraded
 * sockets are no longer the HTTP server's, so `closeAllConnections()` never reaches them.
 */
export function closeWebSockets(app: Hono, code = 1012, reason = 'server restarting'): void {
  const reg = registry.get(app);
  if (!reg) return;
  for (const close of reg.closers) close(code, reason);
  for (const client of reg.loaded?.wss.clients ?? []) client.close(code, reason);
}
