import { siteRefusal, type RequestFacts } from '../http/origin.js';

export type { RequestFacts } from '../http/origin.js';

/**
 * The gateway's cross-site defence (DESIGN §10, the rule in http/origin.ts): its Host allowlist is the
 * loopback names plus `allowedHosts`, and its own origin has the scheme its port speaks (https under
 * TLS). Returns the refusal's message, or null.
 */
export function crossSiteRefusal(f: RequestFacts, allowedHosts: readonly string[], secure: boolean): string | null {
  return siteRefusal(f, { secure, allowedHosts, hostRepair: 'add it to allowedHosts in hub.json if it is yours' });
}
