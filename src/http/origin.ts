import type { MiddlewareHandler } from 'hono';
import { errorBody } from './errors.js';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** True for no Origin at all (a CLI, an agent, a proxy that checked origins itself) or a loopback one. */
export function isLoopbackOrigin(origin: string | undefined): boolean {
  if (origin === undefined) return true;
  try {
    return LOOPBACK.has(new URL(origin).hostname);
  } catch {
    return false;
  }
}

/**
 * Refuses (403) a request a browser made for a page of another origin. WebSockets are not covered by
 * CORS, and a form can POST text/plain anywhere: without this any web page could type into an agent's
 * terminal on the loopback port, or open issues and spawn sessions. The app applies it to every `/api`
 * write; the pane socket (a GET upgrade) applies it itself. Requests without an Origin (CLI, agents, the gateway, which checks its
 * own) pass; a loopback-served page passes. The hostname is compared, never Origin against Host
 * (DNS rebinding defeats that).
 */
export const loopbackOriginOnly: MiddlewareHandler = async (c, next) => {
  const origin = c.req.header('origin');
  if (!isLoopbackOrigin(origin)) return c.json(errorBody('FORBIDDEN', `requests from pages of ${origin} are refused: this backend takes writes and session input from loopback pages only; open the page through 'trellis dashboard' to reach it from elsewhere`), 403);
  await next();
};
