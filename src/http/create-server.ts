import { createAdaptorServer } from '@hono/node-server';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type ServerOptions as TlsOptions } from 'node:https';
import { installReaper, reaperOptions, type ReaperOptions } from './reaper.js';

type Fetch = (request: Request) => Response | Promise<Response>;
type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Sees every request before the app: it answers some itself (the gateway's streaming proxy) and hands
 * the rest to `app`.
 */
export type FrontHandler = (req: IncomingMessage, res: ServerResponse, app: Listener) => void;

/**
 * The one place Trellis creates an HTTP server: every server gets the reaper, and no timeout options
 * are passed (the reaper owns them).
 */
export function createReapedServer(fetch: Fetch, reaper: ReaperOptions = reaperOptions(), tls?: TlsOptions, front?: FrontHandler): Server {
  const fronted = (app: Listener): Listener => (front ? (req, res) => front(req, res, app) : app);
  const server = (
    tls
      ? createAdaptorServer({ fetch, createServer: ((opts: TlsOptions, app: Listener) => createHttpsServer(opts, fronted(app))) as typeof createHttpsServer, serverOptions: tls })
      : createAdaptorServer({ fetch, createServer: ((opts: object, app: Listener) => createHttpServer(opts, fronted(app))) as typeof createHttpServer })
  ) as Server;
  installReaper(server, reaper);
  return server;
}
