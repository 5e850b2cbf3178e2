/**
 * What the gateway changes in the headers of a proxied exchange, both ways: hop-by-hop headers dropped,
 * the gateway's own cookies kept from the backend (and a backend's Set-Cookie for them refused), the
 * backend's Host and Origin put in, and the gateway's policy headers set on every answer.
 */
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { DOOR_AUTHOR_HEADER, DOOR_SCOPE_HEADER, DOOR_VIA_HEADER } from '../http/author.js';
import { DASHBOARD_CSP } from '../http/dashboard-assets.js';
import type { ProxyTarget } from './backends.js';
import { IDENTITY_HEADER_NAMES } from './door-author.js';

/** Headers that describe one hop, never forwarded (RFC 9110 §7.6.1). */
const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'upgrade']);

/**
 * Request headers the gateway's own hop settles: a body's framing is re-made upstream (a length kept,
 * otherwise chunked), and an Expect: 100-continue is answered by the gateway's server itself.
 */
const SETTLED_HERE = new Set(['transfer-encoding', 'expect']);

/**
 * Request headers that would speak as someone: a session (`Trellis-Session`, which the backend files a
 * write under when a local agent sends it), the door's own author and scope stamps, and an identity proxy's
 * person, and the channel an answer came through. A client's copies never cross; the gateway writes the one stamp itself.
 */
const SPEAKS_AS = new Set(['trellis-session', DOOR_AUTHOR_HEADER, DOOR_SCOPE_HEADER, DOOR_VIA_HEADER, ...IDENTITY_HEADER_NAMES]);

/**
 * The strict policy every gateway response carries, proxied ones included: the dashboard's own (one
 * policy for the page wherever it is served; no inline script, no inline style).
 */
export const CSP = DASHBOARD_CSP;

/** Response headers the gateway sets itself, whatever the backend said. */
const OWN_RESPONSE = new Set(['content-security-policy', 'x-content-type-options']);

/** The name of a cookie in a `name=value` pair or a Set-Cookie value, trimmed as a browser reads it. */
const cookieName = (pair: string): string => {
  const eq = pair.indexOf('=');
  return (eq < 0 ? pair : pair.slice(0, eq)).trim();
};

/** The Cookie header without the gateway's own cookies; undefined when nothing is left. */
export function stripCookies(header: string | string[] | undefined, own: readonly string[]): string | undefined {
  if (header === undefined) return undefined;
  const kept = (Array.isArray(header) ? header.join('; ') : header)
    .split(';')
    .map((c) => c.trim())
    .filter((c) => c && !own.includes(cookieName(c)));
  return kept.length ? kept.join('; ') : undefined;
}

/** Connection-header tokens name more hop-by-hop headers. */
function connectionTokens(rawHeaders: readonly string[]): Set<string> | undefined {
  let out: Set<string> | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() !== 'connection') continue;
    for (const t of rawHeaders[i + 1]!.split(',')) (out ??= new Set()).add(t.trim().toLowerCase());
  }
  return out;
}

/**
 * The request's headers as sent upstream, in the client's order: hop-by-hop ones dropped, the Host the
 * backend's, the gateway's cookies removed, an Origin rewritten to the backend's own (the gateway has
 * judged it already: an allowed one reaches this point, and the backend takes session input from
 * loopback origins only), the prefix named, and who the door let in stamped with the scope it holds (a
 * client's `Trellis-Session`, author and scope headers dropped).
 */
export function requestHeaders(req: IncomingMessage, t: ProxyTarget): string[] {
  const raw = req.rawHeaders;
  const extra = connectionTokens(raw);
  const out: string[] = ['host', t.backend.host];
  const cookies: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    // The gateway names the prefix itself: a client's claim is dropped.
    if (lower === 'host' || lower === 'x-forwarded-prefix' || HOP.has(lower) || SETTLED_HERE.has(lower) || SPEAKS_AS.has(lower) || extra?.has(lower)) continue;
    if (lower === 'cookie') cookies.push(raw[i + 1]!);
    else if (lower === 'origin') out.push(name, t.backend.origin);
    else out.push(name, raw[i + 1]!);
  }
  const cookie = cookies.length ? stripCookies(cookies, t.ownCookies) : undefined;
  if (cookie) out.push('cookie', cookie);
  out.push('x-forwarded-prefix', t.prefix);
  out.push(DOOR_AUTHOR_HEADER, encodeURIComponent(t.author));
  out.push(DOOR_SCOPE_HEADER, t.scope);
  return out;
}

/**
 * A backend's response headers as the browser gets them: hop-by-hop ones dropped, a Set-Cookie for one
 * of the gateway's own cookie names dropped (a backend never plants or clears the gateway's login), and
 * the gateway's policy headers set. Repeated headers stay repeated.
 */
export function responseHeaders(rawHeaders: readonly string[], ownCookies: readonly string[], keep: ReadonlySet<string> = new Set()): OutgoingHttpHeaders {
  const extra = connectionTokens(rawHeaders);
  const out: Record<string, string | string[]> = {};
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const lower = rawHeaders[i]!.toLowerCase();
    const value = rawHeaders[i + 1]!;
    if (!keep.has(lower) && (HOP.has(lower) || extra?.has(lower))) continue;
    if (OWN_RESPONSE.has(lower)) continue;
    if (lower === 'set-cookie' && ownCookies.includes(cookieName(value.split(';', 1)[0]!))) continue;
    const had = out[lower];
    out[lower] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
  }
  out['content-security-policy'] = CSP;
  out['x-content-type-options'] = 'nosniff';
  return out;
}
