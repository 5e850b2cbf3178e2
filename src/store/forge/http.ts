import { TrellisError } from '../../events/index.js';

/** One answer from a forge, its body parsed when it is JSON. */
export interface ForgeResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly json: unknown;
}

export interface ForgeHttpOptions {
  /** The store name errors are said in (`gitlab.com`). */
  readonly store: string;
  /** The API root, no trailing slash. */
  readonly api: string;
  readonly env: NodeJS.ProcessEnv;
  /** Headers every request carries: the forge's token header among them. */
  readonly headers: () => Record<string, string>;
  /** What to add to a 401 or 404 message: the repair (which variable, which config key). */
  readonly hint: (status: number) => string;
}

/** Attempts of one request that a 429 or a read's 5xx may take in all. */
const ATTEMPTS = 3;

/**
 * The polite HTTP every forge driver speaks through. Why each rule:
 * - A 429 (or a 403 carrying `Retry-After`) was refused before it was applied, so any request, a POST
 *   included, is sent again after the wait the forge asked for, when that wait is short; a longer one
 *   marks the forge exhausted until then and fails loud.
 * - A 5xx on a read is sent again after a short backoff; a write that got a 5xx or lost its connection
 *   may have been applied, so it is never sent blindly again (one comment, never two).
 * - `RateLimit-Remaining: 0` (GitLab) or `X-RateLimit-Remaining: 0` (GitHub, Gitea/Forgejo behind a
 *   limiter) stops every request until the reset the forge named: a forge that said stop is not asked.
 */
export class ForgeHttp {
  private exhaustedUntil = 0;

  constructor(private readonly o: ForgeHttpOptions) {}

  async request(method: string, pathOrUrl: string, body?: unknown, extra: Record<string, string> = {}): Promise<ForgeResponse> {
    const url = pathOrUrl.startsWith('http') ? pathOrUrl : `${this.o.api}${pathOrUrl}`;
    const retriesOn5xx = method === 'GET' || method === 'PUT' || method === 'PATCH';
    for (let attempt = 1; ; attempt++) {
      this.refuseWhileExhausted();
      const res = await this.send(method, url, body, extra);
      this.noteRateLimit(res.headers);
      if (res.status === 304 || (res.status >= 200 && res.status < 300)) return res;
      const wait = retryAfterMs(res.headers);
      const limited = res.status === 429 || (res.status === 403 && wait !== null);
      if (limited) {
        const ms = wait ?? 1000 * 2 ** (attempt - 1);
        if (ms > this.maxWaitMs() || attempt >= ATTEMPTS) {
          this.exhaustedUntil = Math.max(this.exhaustedUntil, Date.now() + ms);
          throw new TrellisError('FORGE_FAILED', `${this.o.store}: rate limited (${res.status}); the forge asks to wait until ${new Date(Date.now() + ms).toISOString()}, try again then`);
        }
        await delay(ms);
        continue;
      }
      if (res.status >= 500 && retriesOn5xx && attempt < ATTEMPTS) {
        await delay(this.backoffMs() * 2 ** (attempt - 1));
        continue;
      }
      throw this.failure(method, url, res);
    }
  }

  private refuseWhileExhausted(): void {
    if (Date.now() < this.exhaustedUntil) {
      throw new TrellisError('FORGE_FAILED', `${this.o.store}: API rate limit exhausted until ${new Date(this.exhaustedUntil).toISOString()}; try again then`);
    }
  }

  private noteRateLimit(h: Headers): void {
    const remaining = h.get('ratelimit-remaining') ?? h.get('x-ratelimit-remaining');
    const reset = Number(h.get('ratelimit-reset') ?? h.get('x-ratelimit-reset') ?? 0);
    if (remaining === '0' && reset > 0) this.exhaustedUntil = reset * 1000;
  }

  private async send(method: string, url: string, body: unknown, extra: Record<string, string>): Promise<ForgeResponse> {
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: { 'User-Agent': 'trellis', ...this.o.headers(), ...extra, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(Number(this.o.env.TRELLIS_FORGE_TIMEOUT_MS ?? 10_000)),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
      throw new TrellisError('FORGE_UNREACHABLE', `${this.o.store} is unreachable (${cause} on ${method} ${new URL(url).pathname})`);
    }
    if (res.status === 304) return { status: 304, headers: res.headers, json: null };
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      throw new TrellisError('FORGE_UNREACHABLE', `${this.o.store} stopped answering mid-response (${(err as Error).name} on ${method} ${new URL(url).pathname})`);
    }
    let json: unknown = text;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      // a non-JSON answer is reported by status
    }
    return { status: res.status, headers: res.headers, json };
  }

  private failure(method: string, url: string, res: ForgeResponse): TrellisError {
    const j = res.json as { message?: unknown; error?: unknown } | string | null;
    const said = typeof j === 'string' ? j.slice(0, 200) : typeof j?.message === 'string' ? j.message : j?.message !== undefined ? JSON.stringify(j.message) : typeof j?.error === 'string' ? j.error : '';
    if (res.status === 403 && this.exhaustedUntil > Date.now()) {
      return new TrellisError('FORGE_FAILED', `${this.o.store}: API rate limit exhausted until ${new Date(this.exhaustedUntil).toISOString()} (${said})`);
    }
    return new TrellisError('FORGE_FAILED', `${this.o.store} answered ${res.status} to ${method} ${new URL(url).pathname}: ${said}${this.o.hint(res.status)}`);
  }

  private maxWaitMs(): number {
    return Number(this.o.env.TRELLIS_FORGE_MAX_WAIT_MS ?? 60_000);
  }

  private backoffMs(): number {
    return Number(this.o.env.TRELLIS_FORGE_BACKOFF_MS ?? 250);
  }
}

/** `Retry-After` as milliseconds: seconds or an HTTP date (RFC 9110 §10.2.3); null when absent. */
export function retryAfterMs(h: Headers): number | null {
  const v = h.get('retry-after');
  if (v === null) return null;
  if (/^\d+$/.test(v.trim())) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

/**
 * The next page of a listing, by whichever header the forge sent: `Link: <…>; rel="next"` (GitHub,
 * Gitea/Forgejo, GitLab), `X-Next-Page` (GitLab), else `X-Total-Count` against what was read (Gitea/
 * Forgejo behind a proxy that drops Link). Null on the last page.
 */
export function nextPageUrl(url: string, h: Headers, readSoFar: number): string | null {
  const link = h.get('link');
  if (link) {
    for (const part of link.split(',')) {
      const m = /<([^>]+)>\s*;\s*rel="?next"?/.exec(part);
      if (m) return m[1]!;
    }
  }
  const next = h.get('x-next-page');
  if (next !== null) return next.trim() ? withPage(url, Number(next)) : null;
  const total = Number(h.get('x-total-count') ?? NaN);
  if (Number.isFinite(total) && readSoFar < total) return withPage(url, Number(new URL(url).searchParams.get('page') ?? 1) + 1);
  return null;
}

function withPage(url: string, page: number): string {
  const u = new URL(url);
  u.searchParams.set('page', String(page));
  return u.href;
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A forge timestamp as the Issue shape carries it: ISO 8601 in UTC (strings sort as times). */
export const utc = (at: string): string => new Date(at).toISOString();

/** A label color as the Issue shape carries it: hex without `#`. */
export const hex = (color: string | null | undefined): string | undefined => (color ? color.replace(/^#/, '') : undefined);

/**
 * Every page of a listing from `first`, each read by `read`, following `nextPageUrl` (Link, X-Next-Page or
 * a total count). An empty page ends the listing even when a count promised more (items deleted mid-pull).
 */
export async function allPages<T>(http: ForgeHttp, first: string, stats: { requests: number }, read: (v: unknown) => T[]): Promise<T[]> {
  const out: T[] = [];
  // Counted as the forge sent them: a page whose items were all left out (unreadable) still moves on.
  let sent = 0;
  for (let url: string | null = first; url; ) {
    const res = await http.request('GET', url);
    stats.requests++;
    const page = read(res.json);
    out.push(...page);
    const n = Array.isArray(res.json) ? res.json.length : page.length;
    sent += n;
    url = n ? nextPageUrl(url, res.headers, sent) : null;
  }
  return out;
}
