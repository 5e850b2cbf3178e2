/**
 * The WebSocket half of the proxy: an upgrade is forwarded on a connection of its own, then its bytes
 * flow both ways untouched. Nothing of proxyHttp's pool or resends applies: a socket joined is a socket.
 */
import http, { type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import type { ProxyTarget } from './backends.js';
import { requestHeaders, responseHeaders } from './proxy-headers.js';

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
