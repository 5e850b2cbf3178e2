import { createAdaptorServer } from '@hono/node-server';
import type { Server } from 'node:http';
import { createServer as createHttpsServer, type ServerOptions as TlsOptions } from 'node:https';
import { installReaper, reaperOptions, type ReaperOptions } from './reaper.js';

type Fetch = (request: Request) => Response | Promise<Response>;

/**
 * The one place Trellis creates an HTTP server: every server gets the reaper, and no timeout options
 * are passed (the reaper owns them).
 */
export function createReapedServer(fetch: Fetch, reaper: ReaperOptions = reaperOptions(), tls?: TlsOptions): Server {
  const server = (tls ? createAdaptorServer({ fetch, createServer: createHttpsServer, serverOptions: tls }) : createAdaptorServer({ fetch })) as Server;
  installReaper(server, reaper);
  return server;
}
