import { isLoopback } from '../store/endpoint-record.js';

/** The parts of a request the cross-site rules look at (an HTTP request or a WebSocket upgrade alike). */
export interface RequestFacts {
  readonly method: string;
  readonly host: string | undefined;
  readonly origin: string | undefined;
  readonly secFetchSite: string | undefined;
  readonly upgrade: boolean;
}

/** The hostname of a Host header value (`[::1]:8700` → `::1`), lower-cased. */
export function hostnameOf(host: string): string | null {
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

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The cross-site defence of DESIGN §10, decided before authentication: a Host outside the allowlist is
 * refused on every request (DNS rebinding); a mutation or WebSocket upgrade is refused when it carries a
 * foreign Origin, or no Origin while Sec-Fetch-Site says the request came from another site. A request
 * with neither header (a CLI, curl) passes on to authentication. Returns the refusal's message, or null.
 */
export function crossSiteRefusal(f: RequestFacts, allowedHosts: readonly string[]): string | null {
  const hostname = f.host ? hostnameOf(f.host) : null;
  if (!hostname || !hostAllowed(hostname, allowedHosts)) {
    return `Host ${JSON.stringify(f.host ?? '')} is not one this gateway answers to; add it to allowedHosts in hub.json if it is yours`;
  }
  if (SAFE.has(f.method.toUpperCase()) && !f.upgrade) return null;
  if (f.origin !== undefined) {
    let originHost: string | null = null;
    try {
      originHost = f.origin === 'null' ? null : new URL(f.origin).hostname.replace(/^\[|\]$/g, '');
    } catch {}
    if (!originHost || !hostAllowed(originHost, allowedHosts)) return `Origin ${f.origin} may not make changes here`;
    return null;
  }
  const site = f.secFetchSite?.toLowerCase();
  if (site === 'cross-site' || site === 'same-site') return 'a cross-site request without an Origin may not make changes here';
  return null;
}
