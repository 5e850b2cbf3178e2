import { Hono } from 'hono';
import { etag } from 'hono/etag';
import { streamSSE } from 'hono/streaming';
import type { BoardChange } from '../../store/live.js';
import type { AppContext } from '../context.js';

/** If-None-Match semantics (RFC 9110 §13.1.2): `*`, or any listed tag equal under weak comparison. */
function matches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === bare);
}

/** SSE comment line sent this often so idle intermediaries keep the stream open. */
const HEARTBEAT_MS = 15_000;

/**
 * The board and its change stream. GET /api/graph re-derives the board on every request (memoized per
 * generation of its inputs) and answers a matching If-None-Match with a bodyless 304.
 *
 * GET /api/graph/stream (SSE) events:
 *   `ready`  once on connect: { etag, freshness }
 *   `graph`  whenever the board changes: { cause, freshness }, cause one of
 *            issues | forge | specs | config | sessions | worktrees | evals | resync
 * A client refetches /api/graph (with If-None-Match) on `graph`.
 */
export function graphRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  app.get('/api/graph', etag(), async (c) => {
    const snap = await ctx.live.snapshot();
    // Answer a match before building a multi-megabyte response that the etag middleware would discard.
    if (matches(c.req.header('If-None-Match'), snap.etag)) return c.body(null, 304, { ETag: snap.etag, 'Cache-Control': 'no-cache' });
    return c.body(snap.bytes, 200, { 'Content-Type': 'application/json; charset=utf-8', ETag: snap.etag, 'Cache-Control': 'no-cache' });
  });

  app.get('/api/graph/stream', async (c) => {
    const snap = await ctx.live.snapshot();
    return streamSSE(c, async (stream) => {
      let closed = false;
      const queue: BoardChange[] = [];
      let wake: (() => void) | undefined;
      const onChange = (change: BoardChange) => {
        queue.push(change);
        wake?.();
      };
      ctx.live.bus.on('change', onChange);
      stream.onAbort(() => {
        closed = true;
        wake?.();
      });
      const heartbeat = setInterval(() => void stream.write(': ping\n\n'), HEARTBEAT_MS);
      try {
        await stream.writeSSE({ event: 'ready', data: JSON.stringify({ etag: snap.etag, freshness: snap.board.freshness }) });
        while (!closed) {
          const change = queue.shift();
          if (change) await stream.writeSSE({ event: 'graph', data: change.json });
          else await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
        }
      } finally {
        clearInterval(heartbeat);
        ctx.live.bus.off('change', onChange);
      }
    });
  });
  return app;
}
