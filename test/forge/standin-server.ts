/**
 * What the GitLab and Forgejo stand-ins share: a real HTTP server on loopback, a token check, a
 * request log, a settable clock, down / slow modes, and injected faults (an answer sent instead of the
 * next matching request's, or after applying it: the write happened, the answer says it failed).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Fault {
  readonly status: number;
  readonly headers?: Record<string, string>;
  readonly body?: unknown;
  /** Only requests of this method (default: any). */
  readonly method?: string;
  /** Only paths (with query) matching this (default: any). */
  readonly path?: RegExp;
  /** Apply the request first, then answer with the fault: a write the client cannot know landed. */
  readonly afterApplying?: boolean;
}

export interface StandInRequest {
  readonly method: string;
  /** The URL as sent: `pathname` keeps percent-encoding (`acme%2Fshop`). */
  readonly url: URL;
  readonly headers: http.IncomingHttpHeaders;
  /** The JSON body, `{}` when none; undefined when it did not parse. */
  readonly json: Record<string, unknown> | undefined;
}

export type Send = (status: number, json: unknown, headers?: Record<string, string>) => void;

export abstract class StandInServer {
  mode: { slowMs?: number } = {};
  readonly faults: Fault[] = [];
  /** Every request seen: method, path with query, and the status answered. */
  readonly log: { method: string; path: string; status: number }[] = [];
  private server: http.Server | null = null;
  private port = 0;
  protected clock = Date.UTC(2026, 1, 1);

  constructor(protected readonly prefix: string) {}

  get apiUrl(): string {
    return `http://127.0.0.1:${this.port}${this.prefix}`;
  }

  async start(port = 0): Promise<this> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const answer = () => this.dispatch(req, Buffer.concat(chunks).toString(), res);
        if (this.mode.slowMs) setTimeout(answer, this.mode.slowMs);
        else answer();
      });
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  /** Refuses connections until `comeBack()`, on the same port. */
  goDown(): Promise<void> {
    return this.stop();
  }

  async comeBack(): Promise<void> {
    await this.start(this.port);
  }

  /** The next minute on the forge's clock, as an instant. */
  protected tick(): number {
    this.clock += 60_000;
    return this.clock;
  }

  /** Headers every answer carries (the forge's rate-limit headers, say). */
  protected commonHeaders(): Record<string, string> {
    return {};
  }

  protected abstract route(req: StandInRequest, send: Send): void;

  private dispatch(req: http.IncomingMessage, body: string, res: http.ServerResponse): void {
    const url = new URL(req.url!, `http://127.0.0.1:${this.port}`);
    const path = url.pathname + url.search;
    const at = this.faults.findIndex((f) => (!f.method || f.method === req.method) && (!f.path || f.path.test(path)));
    const fault = at >= 0 ? this.faults.splice(at, 1)[0] : undefined;
    const write: Send = (status, json, headers = {}) => {
      this.log.push({ method: req.method!, path, status });
      res.writeHead(status, { 'content-type': 'application/json', ...this.commonHeaders(), ...headers });
      res.end(json === undefined ? '' : JSON.stringify(json));
    };
    const faulted = () => write(fault!.status, fault!.body ?? { message: `injected ${fault!.status}` }, fault!.headers);
    if (fault && !fault.afterApplying) return faulted();
    let json: Record<string, unknown> | undefined;
    try {
      json = body ? (JSON.parse(body) as Record<string, unknown>) : {};
    } catch {
      json = undefined;
    }
    if (!url.pathname.startsWith(this.prefix)) return write(404, { message: '404 Not Found' });
    const inner = new URL(url);
    inner.pathname = url.pathname.slice(this.prefix.length);
    this.route({ method: req.method!, url: inner, headers: req.headers, json }, fault ? () => faulted() : write);
  }
}

/** The page a listing asked for (`page`, and `per_page` or `limit`, within the forge's ceiling). */
export function pageOf<T>(url: URL, all: readonly T[], perKey: string, defaultPer: number, maxPer: number): { items: T[]; page: number; per: number; last: number } {
  const per = Math.min(maxPer, Math.max(1, Number(url.searchParams.get(perKey) ?? defaultPer)));
  const page = Math.max(1, Number(url.searchParams.get('page') ?? 1));
  const last = Math.max(1, Math.ceil(all.length / per));
  return { items: all.slice((page - 1) * per, page * per), page, per, last };
}

/** A `Link` header for page `page` of `last`, as GitHub, GitLab and Gitea write it. */
export function linkHeader(url: URL, publicBase: string, page: number, last: number): string {
  const at = (p: number, rel: string) => {
    const u = new URL(publicBase + url.pathname + url.search);
    u.searchParams.set('page', String(p));
    return `<${u.href}>; rel="${rel}"`;
  };
  return [...(page < last ? [at(page + 1, 'next'), at(last, 'last')] : []), ...(page > 1 ? [at(1, 'first'), at(page - 1, 'prev')] : [])].join(', ');
}

/** `json` without the field `field` (a forge that dropped it), or whole. */
export function without<T extends object>(json: T, field: string | undefined): T {
  if (field === undefined) return json;
  const { [field]: _, ...rest } = json as Record<string, unknown>;
  return rest as T;
}
