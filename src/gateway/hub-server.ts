import net, { type Server, type Socket } from 'node:net';
import type { ServerOptions as TlsOptions } from 'node:https';
import { createReapedServer } from '../http/create-server.js';
import { headerDeadline, reaperOptions, type ReaperOptions } from '../http/reaper.js';
import { GatewayState, type GatewayOptions } from './gateway-state.js';
import { hubApp } from './hub-app.js';
import { Notifier } from './notify-hub.js';
import { mayAnswer } from './door-scope.js';
import { proxyFront, proxyUpgradeRoute, refuse } from './proxy-route.js';

/**
 * TLS 1.2 and 1.3 only, with forward-secret AEAD suites only: ECDHE with AES-GCM or ChaCha20-Poly1305
 * under 1.2 (no static-RSA key exchange, no CBC), every 1.3 suite (all are). The server's order wins.
 */
export const STRICT_TLS = {
  minVersion: 'TLSv1.2',
  ciphers: [
    'TLS_AES_128_GCM_SHA256',
    'TLS_AES_256_GCM_SHA384',
    'TLS_CHACHA20_POLY1305_SHA256',
    'ECDHE-ECDSA-AES128-GCM-SHA256',
    'ECDHE-RSA-AES128-GCM-SHA256',
    'ECDHE-ECDSA-AES256-GCM-SHA384',
    'ECDHE-RSA-AES256-GCM-SHA384',
    'ECDHE-ECDSA-CHACHA20-POLY1305',
    'ECDHE-RSA-CHACHA20-POLY1305',
  ].join(':'),
  honorCipherOrder: true,
} as const satisfies TlsOptions;

export interface HubServer {
  /** The server to bind (a plaintext-sniffing front under TLS). */
  readonly server: Server;
  readonly state: GatewayState;
  close(): Promise<void>;
}

/**
 * The gateway's server: the hub app on a reaped HTTP(S) server; `/p/:id/*` requests and WebSocket
 * upgrades are proxied ahead of it, after the same cross-site and gate checks. With TLS, the one port
 * speaks HTTPS only: a client whose first byte is not a TLS handshake gets an HTTP 400 naming https,
 * then the connection closes, and nothing else.
 */
export function createHubServer(opts: GatewayOptions, tls?: TlsOptions, reaper: ReaperOptions = reaperOptions()): HubServer {
  const state = new GatewayState(opts);
  const app = hubApp(state);
  const http = createReapedServer(app.fetch as (r: Request) => Promise<Response>, reaper, tls && { ...tls, ...STRICT_TLS }, proxyFront(state));

  http.on('upgrade', proxyUpgradeRoute(state));
  let front: Server | undefined;
  const notifier = (state.notifier = new Notifier(state, opts.home, () => front ?? http, opts.pushAgent, (login, project) => {
    const caller = state.callerOfLogin(login);
    return !!caller && mayAnswer(caller, project);
  }));

  if (!tls) {
    const open = track(http);
    return { server: http, state, close: () => (notifier.close(), closeAll(state, closeServer(http, open))) };
  }

  // Paused on connect: the first byte is peeked with read(1) and put back, so TLS takes the socket whole.
  front = net.createServer({ pauseOnConnect: true }, (socket) => {
    // Until its first byte arrives the socket is nobody's: it gets the reaper's header deadline here.
    const deadline = headerDeadline(socket, reaper);
    const onError = () => socket.destroy();
    socket.on('error', onError);
    const sniff = () => {
      const first = socket.read(1) as Buffer | null;
      if (first === null) return void socket.once('readable', sniff);
      deadline.disarm();
      socket.off('error', onError);
      socket.unshift(first);
      if (first[0] === 0x16) http.emit('connection', socket);
      else refuse(socket, 'PLAINTEXT_TO_TLS_PORT', 'this port speaks https only; use an https:// URL');
    };
    sniff();
  });
  const open = track(front);
  const bound = front;
  return { server: front, state, close: () => (notifier.close(), closeAll(state, closeServer(bound, open))) };
}

/** Every socket the server accepted and still open (upgraded WebSockets included). */
function track(server: Server): Set<Socket> {
  const open = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    open.add(s);
    s.once('close', () => open.delete(s));
  });
  return open;
}

/** Stops listening and ends every open connection, long-lived streams and WebSockets included. */
function closeServer(server: Server, open: Set<Socket>): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) resolve();
    else server.close(() => resolve());
    for (const s of open) s.destroy();
  });
}

/** The server closed, then the connections to backends (proxied, and the list's) and every SSH connection to another host (and its forwards) with it. */
async function closeAll(state: GatewayState, server: Promise<void>): Promise<void> {
  await server;
  state.backends.close();
  state.projects.close();
  await state.remote.close();
}
