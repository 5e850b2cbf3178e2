import { Hono } from 'hono';
import { etag } from 'hono/etag';
import type { BoardChange } from '../../store/board/live.js';
import type { AppContext } from '../context.js';
import { route } from '../route-table.js';
import { message, SseFanout } from '../sse-fanout.js';

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
 *   `graph`  whenever the board changes: { cause, causes, freshness, moved }, cause one of
 *            issues | forge | specs | config | sessions | worktrees | evals | resync; `moved` names the
 *            ids that moved by stream kind ({ issues: [id], sessions: [id] }): a kind among the causes but
 *            absent from `moved` moved without a name (any of its streams may have); with `worktrees`,
 *            `branches` names the local branches whose tips moved (none named: no branch moved)
 * A client refetches /api/graph (with If-None-Match) on `graph`, and what it shows that `moved` names.
 */
export function graphRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  route(app, 'read', 'GET', '/api/graph', etag(), async (c) => {
    const snap = await ctx.live.snapshot();
    // Answer a match before building a multi-megabyte response that the etag middleware would discard.
    if (matches(c.req.header('If-None-Match'), snap.etag)) return c.body(null, 304, { ETag: snap.etag, 'Cache-Control': 'no-cache' });
    return c.body(snap.bytes, 200, { 'Content-Type': 'application/json; charset=utf-8', ETag: snap.etag, 'Cache-Control': 'no-cache' });
  });

  // One subscriber list for every stream client: each change is encoded once and the same bytes go to all.
  const fanout = new SseFanout(HEARTBEAT_MS);
  ctx.live.bus.on('change', (change: BoardChange) => fanout.broadcast('graph', change.json));
  // With no page listening, a stream change costs the serve no board rebuild (live.ts: noteAnnounced).
  ctx.live.listening = () => fanout.size > 0;
  route(app, 'read', 'GET', '/api/graph/stream', async (c) => {
    const snap = await ctx.live.snapshot();
    const body = fanout.open(message('ready', JSON.stringify({ etag: snap.etag, freshness: snap.board.freshness })));
    // Chunked, said up front: the server writes the head at once instead of first probing the body's length.
    return c.body(body, 200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive', 'Transfer-Encoding': 'chunked' });
  });
  return app;
}
