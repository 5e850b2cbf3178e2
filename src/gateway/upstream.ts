import http, { type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import net, { type Socket } from 'node:net';
import { Client, Pool, type buildConnector, type Dispatcher } from 'undici';
import { DASHBOARD_CSP } from '../http/dashboard-assets.js';
import type { EndpointRecord } from '../store/host/endpoint-record.js';

/** Headers that describe one hop, never forwarded (RFC 9110 §7.6.1). */
const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'upgrade']);

/**
 * Request headers the gateway's own hop settles: a body's framing is re-made upstream (a length kept,
 * otherwise chunked), and an Expect: 100-continue is answered by the gateway's server itself.
 */
const SETTLED_HERE = new Set(['transfer-encoding', 'expect']);

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

/** A write to a backend that reset the connection: the answer it sent before the reset may still be unread. */
const RESET = new Set(['EPIPE', 'ECONNRESET']);

/**
 * A connection to a backend whose failed writes do not tear it down. A backend may answer early (a 413
 * at its body limit) and close with the rest of the body unread, which resets the connection: the next
 * body write fails, and Node would close the socket on that failure with the answer still unread in the
 * kernel. Here such a write is dropped instead (the body has nowhere to go), and the socket ends on the
 * read side: with the answer parsed, or with the reset reported as the error it is.
 */
function forgivingConnector(opts: buildConnector.Options, callback: buildConnector.Callback): void {
  const socket = net.createConnection({ host: opts.hostname.replace(/^\[|\]$/g, ''), port: Number(opts.port), noDelay: true });
  type Cb = (err?: Error | null) => void;
  const forgive = (cb: Cb) => (err?: Error | null) => cb(err && RESET.has((err as NodeJS.ErrnoException).code ?? '') ? null : err);
  const write = socket._write.bind(socket);
  const writev = socket._writev?.bind(socket);
  socket._write = (chunk: unknown, encoding: BufferEncoding, cb: Cb) => write(chunk, encoding, forgive(cb));
  if (writev) socket._writev = (chunks: { chunk: unknown; encoding: BufferEncoding }[], cb: Cb) => writev(chunks, forgive(cb));
  const failed = (err: Error) => callback(err, null);
  socket.once('error', failed).once('connect', () => {
    socket.off('error', failed);
    callback(null, socket);
  });
}

/** How the gateway talks to a backend: one request per connection at a time, no timeouts of its own. */
const UPSTREAM_OPTIONS = { pipelining: 1, headersTimeout: 0, bodyTimeout: 0, connect: forgivingConnector } as const;

/**
 * Everything about one backend that does not change between requests, computed once: where to connect,
 * the Host and Origin it is sent, and its pool of kept-alive connections.
 */
export class Backend {
  readonly hostname: string;
  readonly port: number;
  /** `127.0.0.1:4711`: the Host every forwarded request carries. */
  readonly host: string;
  /** The backend's own origin: what an allowed browser Origin is rewritten to. */
  readonly origin: string;
  /**
   * Kept-alive connections, never waited for: no cap, so a slow request body or a response that streams
   * (SSE) holds only its own connection. undici's dispatcher, not http.request: a proxied exchange costs
   * about half the CPU (bench `gateway-proxy`). No timeouts of its own: a build may take minutes and a
   * stream hours; the backend's reaper owns abandoned sockets.
   */
  readonly pool: Pool;

  constructor(readonly url: string) {
    const u = new URL(url);
    this.hostname = u.hostname.replace(/^\[|\]$/g, '');
    this.port = Number(u.port || 80);
    this.host = u.host;
    this.origin = `http://${u.host}`;
    this.pool = new Pool(u.origin, { ...UPSTREAM_OPTIONS, connections: null });
  }

  /**
   * A connection of its own for one exchange (closed once it is over): a resend must not land on a
   * kept-alive connection that the failure it follows has doomed as well (a serve's face closes the
   * connections it had paired with a child that died).
   */
  oneShot(): Dispatcher {
    return new Client(this.origin, UPSTREAM_OPTIONS);
  }
}

/** Backends by URL; a backend that moved is dropped with its pool once the table grows. */
const backends = new Map<string, Backend>();
const MAX_BACKENDS = 256;

/** The Backend at a URL, made once. */
function backendAt(url: string): Backend {
  let b = backends.get(url);
  if (!b) {
    if (backends.size >= MAX_BACKENDS) {
      const [oldest] = backends;
      void oldest![1].pool.destroy();
      backends.delete(oldest![0]);
    }
    b = new Backend(url);
    backends.set(url, b);
  }
  return b;
}

/** Each serve's face → the child the gateway last sent its requests to. */
const childOfFace = new Map<string, string>();

/**
 * Where a record's requests go: its serving child directly when the record names one (one hop fewer
 * than the serve's raw proxy), else the face; the serve's face is the fallback either way. A child
 * replaced by a hot swap has its pool closed gracefully: what is in flight finishes, nothing new goes
 * there, so the old child's drain is not held up by the gateway's idle connections.
 */
export function backendsOf(record: EndpointRecord): { backend: Backend; fallback: Backend } {
  const face = backendAt(record.url);
  const before = childOfFace.get(record.url);
  if (before !== undefined && before !== record.child) {
    childOfFace.delete(record.url);
    const retired = backends.get(before);
    backends.delete(before);
    void retired?.pool.close();
  }
  if (record.child === undefined) return { backend: face, fallback: face };
  childOfFace.set(record.url, record.child);
  return { backend: backendAt(record.child), fallback: face };
}

/** The Backend of a record's face: the serve's own raw proxy. */
export const faceOf = (record: EndpointRecord): Backend => backendAt(record.url);

/** One proxied exchange: where it goes and what the gateway removes on the way. */
export interface ProxyTarget {
  readonly backend: Backend;
  /**
   * Where a request `backend` failed goes instead (see mayResend), on a connection of its own: the
   * serve's face, which holds it until a child serves.
   */
  readonly fallback?: Backend;
  /** The upstream path, the `/p/<id>` prefix stripped. */
  readonly path: string;
  /** `/p/<id>`: sent as X-Forwarded-Prefix. */
  readonly prefix: string;
  readonly ownCookies: readonly string[];
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
 * loopback origins only), and the prefix named.
 */
function requestHeaders(req: IncomingMessage, t: ProxyTarget): string[] {
  const raw = req.rawHeaders;
  const extra = connectionTokens(raw);
  const out: string[] = ['host', t.backend.host];
  const cookies: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    // The gateway names the prefix itself: a client's claim is dropped.
    if (lower === 'host' || lower === 'x-forwarded-prefix' || HOP.has(lower) || SETTLED_HERE.has(lower) || extra?.has(lower)) continue;
    if (lower === 'cookie') cookies.push(raw[i + 1]!);
    else if (lower === 'origin') out.push(name, t.backend.origin);
    else out.push(name, raw[i + 1]!);
  }
  const cookie = cookies.length ? stripCookies(cookies, t.ownCookies) : undefined;
  if (cookie) out.push('cookie', cookie);
  out.push('x-forwarded-prefix', t.prefix);
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

/** Responses without a body whatever their headers say (RFC 9110 §6.4.1). */
const bodiless = (method: string | undefined, status: number) => method === 'HEAD' || status === 204 || status === 304 || (status >= 100 && status < 200);

/** A request that carries a body to forward: a length above zero, or a chunked body (RFC 9112 §6.3). */
const hasBody = (req: IncomingMessage) => req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';

/** undici's header object as a flat raw list, a repeated header repeated. */
function flatHeaders(headers: Record<string, string | string[] | undefined>): string[] {
  const out: string[] = [];
  for (const name in headers) {
    const v = headers[name];
    if (Array.isArray(v)) for (const one of v) out.push(name, one);
    else if (v !== undefined) out.push(name, v);
  }
  return out;
}

const unreachable = (res: ServerResponse, err: Error) => {
  res.writeHead(502, { 'content-type': 'application/json; charset=utf-8', 'content-security-policy': CSP, 'x-content-type-options': 'nosniff' });
  res.end(JSON.stringify({ error: { code: 'UPSTREAM_UNREACHABLE', message: `the project's backend did not answer (${err.message})` } }));
};

/** Methods a proxy may repeat when the connection drops before an answer (RFC 9110 §9.2.2). */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A refused connection: nothing of the request left the gateway. */
const refusedConnection = (err: Error): boolean => (err as NodeJS.ErrnoException).code === 'ECONNREFUSED';

/**
 * Whether a request that failed before any answer may be sent again, to the serve's face: when it was
 * refused before a byte of its body was read, or when it is bodiless and idempotent and its connection
 * dropped (a child killed under it, RFC 9110 §9.2.2). A face that refuses is final: its serve is gone.
 */
const mayResend = (req: IncomingMessage, body: IncomingMessage | null, err: Error, toFace: boolean): boolean =>
  refusedConnection(err) ? !toFace && !(body && req.readableDidRead) : !body && IDEMPOTENT.has(req.method ?? '');

/**
 * How often, and after what pause, a failed request is sent again. The first resend goes at once; a
 * child killed by a signal still completes connections for a moment (the kernel tears its memory down
 * before its sockets), so the face may pair a resend with it and lose it too, until the supervisor has
 * seen the exit and holds new connections for the replacement: a few tens of milliseconds. No more: a
 * GET that itself kills the child is not sent to every replacement in turn.
 */
const RESENDS = 2;
const SECOND_RESEND_AFTER_MS = 50;

/**
 * Forwards one HTTP request to a backend, streaming the body both ways (nothing buffered, so SSE flows
 * as it is written, and a slow client holds the backend back instead of filling the gateway's memory).
 * A request the backend failed before answering (a serve's child that exited, or was killed under it)
 * is sent to the target's fallback instead when that is safe (mayResend). Resolves when the exchange is
 * over: false when no backend would take the connection (502).
 *
 * A backend may answer before the request body is through (a 413 after its limit, then a close): that
 * answer reaches the client whole and the rest of the body is read and dropped here, so the client, still
 * sending, is not reset before it reads the answer.
 */
export function proxyHttp(req: IncomingMessage, res: ServerResponse, t: ProxyTarget): Promise<boolean> {
  const body = hasBody(req) ? req : null;
  return new Promise((resolve) => {
    let settled = false;
    const done = (reached: boolean) => {
      if (!settled) resolve(reached);
      settled = true;
    };
    let controller: Dispatcher.DispatchController | undefined;
    let answered = false;
    res.on('close', () => {
      // The client went away first: the backend is not to blame.
      if (!res.writableFinished) controller?.abort(new Error('the client went away'));
      done(true);
    });
    const drainBody = () => {
      if (body && !req.complete) req.resume();
    };
    const fallback = t.fallback;
    const send = (backend: Backend, upstream: Dispatcher, resends: number) => {
      upstream.dispatch(
        { path: t.path, method: req.method ?? 'GET', headers: requestHeaders(req, backend === t.backend ? t : { ...t, backend }), body },
        {
          onRequestStart(c) {
            controller = c;
            if (res.destroyed) c.abort(new Error('the client went away'));
          },
          onResponseStart(_c, status, upHeaders) {
            // An interim answer (100 Continue): the gateway's own server has said it to the client already.
            if (status < 200) return;
            answered = true;
            const out = responseHeaders(flatHeaders(upHeaders), t.ownCookies);
            res.writeHead(status, out);
            // A body of unknown length (an SSE stream) gets its headers at once; any other answer sends
            // them with its first bytes (a 304: with its end), one write instead of two.
            if (!bodiless(req.method, status) && out['content-length'] === undefined) res.flushHeaders();
          },
          onResponseData(c, chunk) {
            if (res.write(chunk)) return;
            c.pause();
            res.once('drain', () => c.resume());
          },
          onResponseEnd() {
            drainBody();
            res.end();
            done(true);
          },
          onResponseError(_c, err) {
            if (res.destroyed) return done(true);
            if (answered) {
              res.destroy();
              return done(true);
            }
            if (fallback && resends < RESENDS && mayResend(req, body, err, backend === fallback)) {
              const again = () => {
                if (!res.destroyed) send(fallback, fallback.oneShot(), resends + 1);
              };
              return resends === 0 ? again() : void setTimeout(again, SECOND_RESEND_AFTER_MS);
            }
            drainBody();
            unreachable(res, err);
            // Unreachable only when refused: a connection reset mid-exchange (a child killed under it) says
            // nothing against the serve, which a fresh probe might wrongly call offline while it replaces it.
            done(!refusedConnection(err));
          },
        },
      );
      // A one-shot connection closes once its exchange is over.
      if (upstream !== backend.pool) void upstream.close();
    };
    send(t.backend, t.backend.pool, 0);
  });
}

/** Request bytes a non-101 answer to a WebSocket upgrade may carry; it is an error page, not a download. */
const REFUSAL_BODY_MAX = 64 * 1024;

/**
 * Forwards a WebSocket upgrade: the handshake goes to the backend on a connection of its own (prefix
 * stripped, the gateway's cookies removed); its 101 comes back with the same header rules as any
 * response, then bytes flow both ways untouched. A refusal (any other status) is relayed and the
 * connection closed. `onOpen` is told the two sockets once they are joined, so they can be ended.
 */
export function proxyUpgrade(req: IncomingMessage, client: Socket, head: Buffer, t: ProxyTarget, onOpen: (end: () => void) => () => void): void {
  const { backend } = t;
  const headers = requestHeaders(req, t);
  headers.push('connection', 'Upgrade', 'upgrade', req.headers.upgrade ?? 'websocket');
  const upstream = http.request({ host: backend.hostname, port: backend.port, method: req.method, path: t.path, headers, agent: false });
  client.setNoDelay(true);
  // Until the handshake is answered, a client gone is a request abandoned.
  const abandon = () => upstream.destroy();
  client.on('error', abandon).on('close', abandon);
  upstream.on('error', () => client.destroy());
  upstream.on('upgrade', (up, socket, upHead) => {
    client.off('error', abandon).off('close', abandon);
    socket.setNoDelay(true);
    const both = () => {
      client.destroy();
      socket.destroy();
    };
    const forget = onOpen(both);
    client.write(headBytes(`HTTP/1.1 101 ${up.statusMessage || 'Switching Protocols'}`, responseHeaders(up.rawHeaders, t.ownCookies, UPGRADE_KEEP)));
    if (upHead.length) client.write(upHead);
    if (head.length) socket.write(head);
    client.on('error', both).on('close', () => {
      forget();
      socket.end();
    });
    socket.on('error', both).on('close', () => client.end());
    client.pipe(socket);
    socket.pipe(client);
  });
  upstream.on('response', (up) => {
    const chunks: Buffer[] = [];
    let size = 0;
    up.on('data', (d: Buffer) => {
      size += d.length;
      if (size <= REFUSAL_BODY_MAX) chunks.push(d);
    });
    up.on('end', () => {
      const body = Buffer.concat(chunks);
      const h = responseHeaders(up.rawHeaders, t.ownCookies);
      delete h['transfer-encoding'];
      h['content-length'] = String(body.length);
      h.connection = 'close';
      client.end(Buffer.concat([headBytes(`HTTP/1.1 ${up.statusCode} ${up.statusMessage ?? ''}`, h), body]));
    });
  });
  upstream.end();
}

/** The handshake's own headers, kept on a 101. */
const UPGRADE_KEEP = new Set(['connection', 'upgrade']);

function headBytes(statusLine: string, headers: OutgoingHttpHeaders): Buffer {
  const lines = [statusLine];
  for (const [k, v] of Object.entries(headers)) for (const one of Array.isArray(v) ? v : [v]) lines.push(`${k}: ${String(one)}`);
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
}
