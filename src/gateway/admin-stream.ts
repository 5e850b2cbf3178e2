import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { GatewayState } from './gateway-state.js';
import { callerOf } from './hub-context.js';

const HEARTBEAT_MS = 15_000;
const AUTH_RECHECK_MS = 1_000;

/**
 * An SSE stream of `event` for an admin: each value `subscribe` hands over is sent in order, one at a time
 * (a slow reader queues, never drops). A login that ends while the stream is open (logout, a new admin
 * password) ends the stream too, within a second (a stat of hub.json and a map lookup): nothing reaches a
 * caller who may no longer read it, and the page learns to ask for the login again.
 */
export function adminStream(c: Context, state: GatewayState, event: string, subscribe: (push: (data: string) => void) => (() => void) | undefined, opening?: string): Response {
  return streamSSE(c, async (stream) => {
    const queue: string[] = [];
    let wake: (() => void) | undefined;
    let closed = false;
    const unsubscribe = subscribe((data) => {
      queue.push(data);
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
      if (opening) await stream.write(opening);
      while (!closed && admitted()) {
        const data = queue.shift();
        if (data !== undefined) await stream.writeSSE({ event, data });
        else await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    } finally {
      clearInterval(heartbeat);
      clearInterval(recheck);
      unsubscribe?.();
    }
  });
}
