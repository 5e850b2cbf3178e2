/**
 * One proxied HTTP exchange, streamed both ways, and when a request that failed before any answer may be
 * sent again (to the serve's face). Headers are in proxy-headers.ts, backends in backends.ts, the
 * WebSocket upgrade in websocket-proxy.ts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { rawRefusal } from '../http/errors.js';
import type { Backend, ProxyTarget } from './backends.js';
import { CSP, requestHeaders, responseHeaders } from './proxy-headers.js';

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
  const { status, body } = rawRefusal('UPSTREAM_UNREACHABLE', `the project's backend did not answer (${err.message})`);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-security-policy': CSP, 'x-content-type-options': 'nosniff' });
  res.end(body);
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
