import type { HttpBindings } from '@hono/node-server';
import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { Delivered } from '../store/host/notify-deliver.js';
import type { GatewayState } from './gateway-state.js';
import { callerOf } from './hub-context.js';

type Env = { Bindings: HttpBindings };

const HEARTBEAT_MS = 15_000;
const AUTH_RECHECK_MS = 1_000;

/**
 * `GET /hub/notify/stream`: the notifier's events as server-sent events (`event: notify`), for a page that
 * shows desktop notifications while it is open. Admin scope (the app checks `/hub/*`); a login that ends
 * ends the stream within a second, as the project stream does.
 */
export function notifyRoutes(state: GatewayState): Hono<Env> {
  const app = new Hono<Env>();
  app.get('/hub/notify/stream', (c) =>
    streamSSE(c, async (stream) => {
      const queue: Delivered[] = [];
      let wake: (() => void) | undefined;
      let closed = false;
      const stop = state.notifier?.listen((e) => {
        queue.push(e);
        wake?.();
      });
      stream.onAbort(() => {
        closed = true;
        wake?.();
      });
      const admitted = () => callerOf(c, state).admin;
      const heartbeat = setInterval(() => void stream.write(': ping\n\n'), HEARTBEAT_MS);
      const recheck = setInterval(() => !admitted() && wake?.(), AUTH_RECHECK_MS);
      try {
        await stream.write(': listening\n\n');
        while (!closed && admitted()) {
          const e = queue.shift();
          if (e) await stream.writeSSE({ event: 'notify', data: JSON.stringify(e) });
          else await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
        }
      } finally {
        clearInterval(heartbeat);
        clearInterval(recheck);
        stop?.();
      }
    }),
  );
  return app;
}
