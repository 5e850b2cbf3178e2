import { createHash, randomBytes } from 'node:crypto';

/** What a login grants: admin, or the projects whose gate password it passed. */
export interface Grant {
  admin: boolean;
  readonly projects: Set<string>;
  expires: number;
}

/** Tables past this size drop their expired entries before growing. */
const PRUNE_AT = 10_000;

/** A login lasts this long without use. */
const SESSION_MS = 12 * 60 * 60 * 1000;

/**
 * Server-side login sessions. The cookie carries a random 256-bit id; the table holds only its sha256,
 * so a lookup never compares secrets byte by byte and a leaked table gives no cookie.
 */
export class SessionTable {
  private readonly grants = new Map<string, Grant>();

  private static key(id: string): string {
    return createHash('sha256').update(id).digest('hex');
  }

  /** A new session id (256 random bits, base64url). */
  create(grant: { admin: boolean; project?: string }, now = Date.now()): string {
    if (this.grants.size >= PRUNE_AT) for (const [k, g] of this.grants) if (g.expires <= now) this.grants.delete(k);
    const id = randomBytes(32).toString('base64url');
    this.grants.set(SessionTable.key(id), { admin: grant.admin, projects: new Set(grant.project ? [grant.project] : []), expires: now + SESSION_MS });
    return id;
  }

  /**
   * A login: always a new id (a cookie planted before it — by a page on another port of the same host,
   * whose cookies this one shares — is never promoted), carrying `grant` plus whatever the caller's
   * still-valid session `previous` held (a second gate login in one browser adds to the first). The
   * previous id is revoked.
   */
  rotate(previous: string | undefined, grant: { admin: boolean; project?: string }, now = Date.now()): string {
    const before = this.get(previous, now);
    this.revoke(previous);
    const id = this.create(grant, now);
    const g = this.grants.get(SessionTable.key(id))!;
    if (before) {
      g.admin ||= before.admin;
      for (const p of before.projects) g.projects.add(p);
    }
    return id;
  }

  get(id: string | undefined, now = Date.now()): Grant | undefined {
    if (!id) return undefined;
    const k = SessionTable.key(id);
    const g = this.grants.get(k);
    if (!g) return undefined;
    if (g.expires <= now) {
      this.grants.delete(k);
      return undefined;
    }
    g.expires = now + SESSION_MS;
    return g;
  }

  revoke(id: string | undefined): void {
    if (id) this.grants.delete(SessionTable.key(id));
  }

  /** Every session ends (the admin password changed). */
  revokeAll(): void {
    this.grants.clear();
  }
}

/**
 * Login attempts allowed per key (a client address and a scope: `admin`, or one project's gate) per
 * window, then 429 until the window ends. An attempt is counted when it starts, before the password is
 * checked: parallel guesses all count, so 1,000 sent at once get `limit` checks, not 1,000. Only a
 * success in the same scope clears the count: a project password never reopens the admin scope.
 */
export class LoginLimiter {
  private readonly attempts = new Map<string, { count: number; resetAt: number }>();
  constructor(
    private readonly limit = 5,
    private readonly windowMs = 60_000,
  ) {}

  /** Counts one attempt under `key`: 0 when it may go on, else the seconds to wait (nothing counted). */
  attempt(key: string, now = Date.now()): number {
    if (this.attempts.size >= PRUNE_AT) for (const [k, x] of this.attempts) if (x.resetAt <= now) this.attempts.delete(k);
    const a = this.attempts.get(key);
    if (!a || a.resetAt <= now) {
      this.attempts.set(key, { count: 1, resetAt: now + this.windowMs });
      return 0;
    }
    if (a.count >= this.limit) return Math.max(1, Math.ceil((a.resetAt - now) / 1000));
    a.count++;
    return 0;
  }

  /** The attempt under `key` was the right password: its count starts over. */
  succeed(key: string): void {
    this.attempts.delete(key);
  }
}

/**
 * Whom login attempts are counted against: an IPv4 address (an IPv4-mapped IPv6 one as its IPv4), or
 * an IPv6 address's /64 network. One host is usually handed a whole /64 and may pick any address in it
 * for each connection, so counting per IPv6 address would give it 2^64 fresh tries.
 */
export function attemptKey(address: string): string {
  const bare = address.replace(/%.*$/, '').toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(bare);
  if (mapped) return mapped[1]!;
  if (!bare.includes(':')) return bare;
  const [head, tail] = bare.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  const network = groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, ''));
  // Written short, as an address is: the zero groups the trailing `::` stands for are left out.
  while (network.at(-1) === '0') network.pop();
  return `${network.join(':')}::/64`;
}
