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

  /** Adds to an existing session's grant (a second login on the same browser). */
  extend(id: string, grant: { admin: boolean; project?: string }, now = Date.now()): boolean {
    const g = this.get(id, now);
    if (!g) return false;
    g.admin ||= grant.admin;
    if (grant.project) g.projects.add(grant.project);
    return true;
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

/** Failed logins allowed per client address per window, then 429 until the window ends. */
export class LoginLimiter {
  private readonly failures = new Map<string, { count: number; resetAt: number }>();
  constructor(
    private readonly limit = 5,
    private readonly windowMs = 60_000,
  ) {}

  /** Seconds the client must wait, or 0 when it may try. */
  retryAfter(client: string, now = Date.now()): number {
    const f = this.failures.get(client);
    if (!f || f.resetAt <= now) return 0;
    return f.count >= this.limit ? Math.ceil((f.resetAt - now) / 1000) : 0;
  }

  fail(client: string, now = Date.now()): void {
    if (this.failures.size >= PRUNE_AT) for (const [k, x] of this.failures) if (x.resetAt <= now) this.failures.delete(k);
    const f = this.failures.get(client);
    if (!f || f.resetAt <= now) this.failures.set(client, { count: 1, resetAt: now + this.windowMs });
    else f.count++;
  }

  succeed(client: string): void {
    this.failures.delete(client);
  }
}
