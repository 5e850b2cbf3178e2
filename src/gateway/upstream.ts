import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import net, { type Socket } from 'node:net';
import { DASHBOARD_CSP } from '../http/dashboard-assets.js';
import type { EndpointRecord } from '../store/endpoint-record.js';

/** Headers that describe one hop, never forwarded (RFC 9110 §7.6.1). */
const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'upgrade']);

/**
 * The strict policy every gateway response carries, proxied ones included: the dashboard's own (one
 * policy for the page wherever it is served; no inline script, no inline style).
 */
export const CSP = DASHBOARD_CSP;

/** The Cookie header without the gateway's own cookies; undefined when nothing is left. */
export function stripCookies(header: string | string[] | undefined, own: readonly string[]): string | undefined {
  if (header === undefined) return undefined;
  const kept = (Array.isArray(header) ? header.join('; ') : header)
    .split(';')
    .map((c) => c.trim())
    .filter((c) => c && !own.includes(c.slice(0, c.indexOf('=') >>> 0).trim()));
  return kept.length ? kept.join('; ') : undefined;
}

function forwardHeaders(headers: IncomingHttpHeaders, upstreamHost: string, ownCookies: readonly string[], prefix: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP.has(k) && k !== 'cookie' && k !== 'host') out[k] = v;
  const cookie = stripCookies(headers.cookie, ownCookies);
  if (cookie) out.cookie = cookie;
  out.host = upstreamHost;
  // The gateway has judged the browser's Origin already (an allowed one reaches this point); the backend
  // takes session input from loopback origins only, so it is told the request comes from its own origin.
  if (headers.origin !== undefined) out.origin = `http://${upstreamHost}`;
  out['x-forwarded-prefix'] = prefix;
  return out;
}

/** Upstream connections are reused across requests: a proxied request costs no new handshake. */
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

/**
 * Forwards one HTTP request to a backend, streaming the body both ways (nothing buffered, so SSE flows
 * as it is written). Resolves when the exchange is over: false when the backend could not be reached (502).
 */
export function proxyHttp(req: IncomingMessage, res: ServerResponse, record: EndpointRecord, path: string, prefix: string, ownCookies: readonly string[]): Promise<boolean> {
  const target = new URL(record.url);
  return new Promise((resolve) => {
    const upstream = http.request({
      host: target.hostname,
      port: target.port,
      method: req.method,
      path,
      headers: forwardHeaders(req.headers, target.host, ownCookies, prefix),
      agent,
    });
    const done = (reached = true) => resolve(reached);
    upstream.on('response', (up) => {
      const headers: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && !HOP.has(k)) headers[k] = v;
      headers['content-security-policy'] = CSP;
      headers['x-content-type-options'] = 'nosniff';
      res.writeHead(up.statusCode ?? 502, headers);
      // A body of unknown length (an SSE stream) gets its headers at once; a sized one sends them with its
      // first bytes, one write instead of two. Every chunk is forwarded as it arrives either way.
      if (up.headers['content-length'] === undefined) res.flushHeaders();
      up.pipe(res);
      up.on('error', () => res.destroy());
      res.on('close', () => {
        if (!res.writableFinished) up.destroy();
        done();
      });
    });
    upstream.on('error', (err) => {
      if (!res.headersSent) {
        res.writeHead(502, { 'content-type': 'application/json; charset=utf-8', 'x-content-type-options': 'nosniff' });
        res.end(JSON.stringify({ error: { code: 'UPSTREAM_UNREACHABLE', message: `the project's backend did not answer (${err.message})` } }));
      } else res.destroy();
      done(false);
    });
    req.on('aborted', () => upstream.destroy());
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  });
}

/**
 * Forwards a WebSocket upgrade by piping raw sockets: the request line and headers (prefix stripped,
 * the gateway's cookies removed) go to the backend, then bytes flow both ways untouched.
 */
export function proxyUpgrade(req: IncomingMessage, client: Socket, head: Buffer, record: EndpointRecord, path: string, prefix: string, ownCookies: readonly string[]): void {
  const target = new URL(record.url);
  const upstream = net.connect({ host: target.hostname, port: Number(target.port), noDelay: true });
  client.setNoDelay(true);
  const both = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', both).on('close', () => upstream.end());
  upstream.on('error', both).on('close', () => client.end());
  upstream.once('connect', () => {
    const headers = forwardHeaders(req.headers, target.host, ownCookies, prefix);
    headers.connection = 'Upgrade';
    headers.upgrade = req.headers.upgrade ?? 'websocket';
    const lines = [`${req.method} ${path} HTTP/1.1`];
    for (const [k, v] of Object.entries(headers)) for (const one of Array.isArray(v) ? v : [v]) lines.push(`${k}: ${one}`);
    upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (head.length) upstream.write(head);
    client.pipe(upstream);
    upstream.pipe(client);
  });
}
