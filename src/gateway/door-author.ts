import type { IncomingHttpHeaders } from 'node:http';
import { homedir } from 'node:os';
import { gitUserName } from '../store/project/repository.js';
import { gateOf } from '../store/host/project-list.js';
import type { IdentityProxy } from '../store/host/hub-config.js';
import type { Caller } from './gateway-state.js';

/** Who a write is filed as when the door knows nobody (spec §4.6.5: `human` from the dashboard). */
export const NOBODY_KNOWN = 'human';

/**
 * The headers each identity-aware proxy sets, most specific first: Tailscale Serve's login (an
 * email-like, unique name; `Tailscale-User-Name` is a display name, neither unique nor always ASCII),
 * oauth2-proxy's email, then its user (with `--pass-user-headers`, the default behind `--upstream`).
 */
const IDENTITY_HEADERS: Readonly<Record<IdentityProxy['kind'], readonly string[]>> = {
  tailscale: ['tailscale-user-login'],
  'oauth2-proxy': ['x-forwarded-email', 'x-forwarded-user'],
};

/** Every header an identity proxy announces a person with: stripped from what reaches a backend. */
export const IDENTITY_HEADER_NAMES: readonly string[] = [...new Set([...Object.values(IDENTITY_HEADERS).flat(), 'tailscale-user-name', 'tailscale-user-profile-pic'])];

const bare = (addr: string): string => addr.replace(/^::ffff:/, '').replace(/%.*$/, '').toLowerCase();

/** The person an identity proxy announces, only when the request's TCP peer is that proxy. */
export function proxiedPerson(proxy: IdentityProxy | undefined, remoteAddress: string | undefined, headers: IncomingHttpHeaders): string | null {
  if (!proxy || !remoteAddress) return null;
  const peer = bare(remoteAddress);
  if (!proxy.from.some((a) => bare(a) === peer)) return null;
  for (const name of IDENTITY_HEADERS[proxy.kind]) {
    const v = headers[name];
    const value = (Array.isArray(v) ? v[0] : v)?.trim();
    // A control character is no name: such a header is a forgery or a broken proxy, and is not believed.
    if (value && !/[\u0000-\u001f\u007f]/.test(value)) return value;
  }
  return null;
}

// Module-level on purpose: a memo of a fact on disk (the gateway user's global git config), read once.
let gitOwner: string | null | undefined;

/** The hub's owner: `owner` in hub.json, else the gateway user's git `user.name` (else the OS user). */
export function ownerName(hubOwner: string | undefined): string {
  if (hubOwner) return hubOwner;
  if (gitOwner === undefined) gitOwner = gitUserName(homedir());
  return gitOwner ?? NOBODY_KNOWN;
}

/**
 * Who a request through the door acts as, for the author of its writes (README, Security: "Who a write
 * is by"): the person an identity proxy the owner named announces; else the admin login's owner; else
 * the `name` of the project gate whose password this login passed; else `human`. Loopback without a
 * password is no login: the page there writes as `human`, as plain `trellis serve`'s does.
 */
export function doorAuthorOf(caller: Caller, projectId: string, remoteAddress: string | undefined, headers: IncomingHttpHeaders): string {
  const person = proxiedPerson(caller.hub.identityProxy, remoteAddress, headers);
  if (person) return person;
  if (caller.passwordSet && caller.grant?.admin) return ownerName(caller.hub.owner);
  const gate = gateOf(caller.hub, projectId);
  if (typeof gate === 'object' && gate.name && caller.grant?.projects.has(projectId)) return gate.name;
  return NOBODY_KNOWN;
}
