import type { MiddlewareHandler } from 'hono';
import { TrellisError } from '../events/index.js';
import { isLoopback } from '../store/host/endpoint-record.js';

/** The parts of a request the cross-site rules look at (an HTTP request or a WebSocket upgrade alike). */
export interface RequestFacts {
  readonly method: string;
  readonly host: string | undefined;
  readonly origin: string | undefined;
  readonly secFetchSite: string | undefined;
  readonly upgrade: boolean;
}

/** What a server answers to: its scheme and the Host names beyond loopback ones. */
export interface Site {
  /** The port speaks TLS: a page of this site has an https origin. */
  readonly secure: boolean;
  /** Host names beyond loopback ones (a gateway's public names). */
  readonly allowedHosts: readonly string[];
  /** What to do about a refused Host, said in the refusal. */
  readonly hostRepair: string;
}

/** A Host header value: a DNS name or IPv4 address, or a bracketed IPv6 address, then an optional port. */
const HOST_SHAPE = /^(?:[a-z0-9_.-]+|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i;

/** The hostname of a Host header value (`[::1]:8700` → `::1`), lower-cased; null for anything else. */
export function hostnameOf(host: string): string | null {
  if (!HOST_SHAPE.test(host)) return null;
  try {
    return new URL(`http://${host}`).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  } catch {
    return null;
  }
}

/** Loopback names and addresses, `*.localhost`, and the configured public names. */
export function hostAllowed(hostname: string, extra: readonly string[]): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  return isLoopback(h) || h === 'localhost' || h.endsWith('.localhost') || extra.some((x) => x.toLowerCase() === h);
}

/** The origin of a page this server served at `host` (scheme, host and port; default ports normalized). */
export function ownOrigin(host: string, secure: boolean): string | null {
  try {
    return new URL(`${secure ? 'https' : 'http'}://${host}`).origin;
  } catch {
    return null;
  }
}

/** An Origin header value normalized (`http://LOCALHOST:80` → `http://localhost`); null for `null` or garbage. */
function normalizedOrigin(origin: string): string | null {
  try {
    const o = new URL(origin).origin;
    return o === 'null' ? null : o;
  } catch {
    return null;
  }
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The cross-site defence of DESIGN §10, for the gateway and the backend alike, decided before anything
 * else: a Host outside the allowlist is refused on every request, reads included (DNS rebinding). A
 * mutation or WebSocket upgrade is refused when it carries an Origin that is not this site's own —
 * scheme, host AND port, since cookies ignore ports and a page on another loopback port (any local dev
 * server) is another site — or no Origin while Sec-Fetch-Site says the request came from another site.
 * Origin is compared with the Host only after the Host passed the allowlist, so a rebound name never
 * gets this far. A request with neither header (a CLI, curl) passes. Returns the refusal's message, or null.
 */
export function siteRefusal(f: RequestFacts, site: Site): string | null {
  const hostname = f.host ? hostnameOf(f.host) : null;
  if (!hostname || !hostAllowed(hostname, site.allowedHosts)) return `Host ${JSON.stringify(f.host ?? '')} is not one this server answers to; ${site.hostRepair}`;
  if (SAFE.has(f.method.toUpperCase()) && !f.upgrade) return null;
  if (f.origin !== undefined) {
    const own = ownOrigin(f.host!, site.secure);
    if (own === null || normalizedOrigin(f.origin) !== own) return `requests from pages of ${f.origin} may not make changes here: only pages of ${own} may (scheme, host and port are compared)`;
    return null;
  }
  const fetchSite = f.secFetchSite?.toLowerCase();
  if (fetchSite === 'cross-site' || fetchSite === 'same-site') return 'a cross-site request without an Origin may not make changes here';
  return null;
}

/**
 * The backend's Host and Origin rule (`trellis serve`'s child and the in-process server alike): it
 * listens on loopback only and answers loopback Host names only; reaching it from elsewhere goes through
 * a gateway, which rewrites Host and Origin to the backend's own after judging them itself.
 */
const BACKEND_SITE: Site = {
  secure: false,
  allowedHosts: [],
  hostRepair: "this backend answers loopback names only (127.0.0.1, localhost, ::1); reach it from elsewhere through 'trellis serve --public' or 'trellis dashboard'",
};

/**
 * Refuses (403, a JSON error) a request for another Host, and a write or WebSocket upgrade from a page of
 * another origin: without it a DNS-rebinding page could read sessions' captures and issues, and any page
 * — a form can POST text/plain anywhere, and WebSockets are not covered by CORS — could type into an
 * agent's terminal or open issues and spawn sessions.
 */
export const sameSiteOnly: MiddlewareHandler = async (c, next) => {
  const refusal = siteRefusal(
    // No Host header: a request made in-process (app.request) or by an HTTP/1.0 client, never a browser's.
    { method: c.req.method, host: c.req.header('host') ?? new URL(c.req.url).host, origin: c.req.header('origin'), secFetchSite: c.req.header('sec-fetch-site'), upgrade: c.req.header('upgrade')?.toLowerCase() === 'websocket' },
    BACKEND_SITE,
  );
  if (refusal) throw new TrellisError('FORBIDDEN', refusal);
  await next();
};
