import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ErrorCode } from '../events/index.js';
import { dashboardDistDir, dashboardResponse, isDashboardPath } from '../http/dashboard-assets.js';
import { rawRefusal } from '../http/errors.js';
import type { EndpointRecord } from '../store/host/endpoint-record.js';
import { gateOf } from '../store/host/project-list.js';
import { isRemoteId } from '../store/host/remote-projects.js';
import type { GatewayState } from './gateway-state.js';
import { crossSiteRefusal } from './request-guard.js';
import type { ProxyTarget } from './backends.js';
import { CSP } from './proxy-headers.js';
import { heldScope, judgeAtDoor } from './door-scope.js';
import type { Scope } from '../http/route-table.js';
import { doorAuthorOf } from './door-author.js';
import { proxyHttp } from './upstream.js';
import { proxyUpgrade } from './websocket-proxy.js';

/** `/p/<id>/rest?query` → id and the upstream path `/rest?query`. */
export function splitProxyPath(rawUrl: string): { id: string; path: string } | null {
  const m = /^\/p\/([^/?#]+)(\/[^?#]*)?(\?.*)?$/.exec(rawUrl);
  if (!m) return null;
  let id: string;
  try {
    id = decodeURIComponent(m[1]!);
  } catch {
    return null;
  }
  return { id, path: `${m[2] ?? '/'}${m[3] ?? ''}` };
}

type Verdict =
  | {
      readonly ok: true;
      readonly record: EndpointRecord;
      readonly id: string;
      readonly path: string;
      /** The login session this exchange needed (its gate asks for a login), if any: the exchange ends with it. */
      readonly session: string | undefined;
      /** Who the door let in: the author stamped on the request (door-author.ts). */
      readonly author: string;
      /** The scope the door judged the caller to hold there: stamped beside the author. */
      readonly scope: Scope;
    }
  | { readonly ok: false; readonly code: ErrorCode; readonly message: string };

/**
 * Every check a `/p/:id/*` request or WebSocket upgrade passes before any upstream contact: the
 * cross-site rules, the project's gate, then an online, instance-validated record.
 */
async function admit(state: GatewayState, req: IncomingMessage, upgrade: boolean): Promise<Verdict> {
  const hub = state.hubOrError();
  if ('broken' in hub) return { ok: false, code: 'HUB_CONFIG_BROKEN', message: hub.broken };
  const refusal = crossSiteRefusal(
    { method: req.method ?? 'GET', host: req.headers.host, origin: req.headers.origin, secFetchSite: req.headers['sec-fetch-site'] as string | undefined, upgrade },
    state.allowedHosts(hub),
    state.opts.tls,
  );
  if (refusal) return { ok: false, code: 'FORBIDDEN', message: refusal };
  const target = splitProxyPath(req.url ?? '');
  if (!target || (state.opts.only && target.id !== state.opts.only)) return { ok: false, code: 'NOT_FOUND', message: 'no such project' };
  const caller = state.caller(req.socket.remoteAddress, req.headers.cookie, hub);
  const refused = state.projectRefusal(caller, target.id);
  if (refused === 401) return { ok: false, code: 'UNAUTHENTICATED', message: 'log in first (POST /auth/login)' };
  if (refused === 403) return { ok: false, code: 'FORBIDDEN', message: 'this login does not open that project' };
  // Judged as the backend will route it: the path forwarded is the path judged (http/route-judge.ts).
  const door = judgeAtDoor(caller, target.id, req.method ?? 'GET', target.path);
  if (!door.ok) return door;
  const remote = isRemoteId(target.id);
  const record = remote ? state.remote.record(target.id) : await state.verdicts.onlineRecord(target.id);
  if (!record) {
    if (remote) return { ok: false, code: 'NOT_FOUND', message: `project ${target.id} is offline (its host is unreachable or its backend is not running); GET /projects says why` };
    return { ok: false, code: 'NOT_FOUND', message: `project ${target.id} has no running backend; start it with POST /projects/${target.id}/serve or 'trellis serve'` };
  }
  const gate = gateOf(hub, target.id);
  const author = doorAuthorOf(caller, target.id, req.socket.remoteAddress, req.headers);
  return { ok: true, record, id: target.id, path: door.path, session: gate === 'open' || gate === 'loopback' ? undefined : caller.sessionId, author, scope: heldScope(caller, target.id) };
}

/**
 * A page load under `/p/<id>/` that cannot reach the backend (not logged in: 401; not running: 404) gets
 * the gateway's own copy of the same bundle, so the person sees a login form or "offline" (the page's own
 * API probe gets the JSON refusal and says which) instead of a JSON error. Only the page and its hashed
 * assets: no API path is ever answered this way.
 */
async function sentOwnPage(req: IncomingMessage, res: ServerResponse, status: number): Promise<boolean> {
  const target = splitProxyPath(req.url ?? '');
  if ((status !== 401 && status !== 404) || !target || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
  const path = target.path.replace(/\?.*$/, '');
  if (!isDashboardPath(path)) return false;
  const page = await dashboardResponse(dashboardDistDir(), path);
  const headers: Record<string, string> = {};
  page.headers.forEach((v, k) => (headers[k] = v));
  res.writeHead(page.status, { ...headers, 'content-security-policy': CSP });
  res.end(req.method === 'HEAD' ? undefined : Buffer.from(await page.arrayBuffer()));
  return true;
}

/**
 * Where an admitted exchange goes, the prefix stripped: a request to the serve's child directly (its face
 * as the fallback); a WebSocket to the face, where the per-request hop costs nothing worth saving and a
 * handshake made while no child serves is held instead of refused.
 */
const target = (state: GatewayState, v: Extract<Verdict, { ok: true }>, upgrade = false): ProxyTarget => ({
  ...(upgrade ? { backend: state.backends.faceOf(v.record) } : state.backends.of(v.record)),
  path: v.path,
  prefix: `/p/${v.id}`,
  ownCookies: state.ownCookies,
  author: v.author,
  scope: v.scope,
});

/**
 * The `/p/:id/*` route, answered ahead of the hub app (no framework between the sockets): streamed both
 * ways with the prefix and the gateway's cookies stripped. Anything else goes to `app`.
 */
export function proxyFront(state: GatewayState) {
  return (req: IncomingMessage, res: ServerResponse, app: (req: IncomingMessage, res: ServerResponse) => void): void => {
    const url = req.url ?? '';
    if (!url.startsWith('/p/')) return app(req, res);
    // The dashboard page finds its project's API relative to its own folder: `/p/<id>` must end in a slash.
    const bare = /^\/p\/([^/?#]+)(\?.*)?$/.exec(url);
    if (bare && (req.method === 'GET' || req.method === 'HEAD')) {
      res.writeHead(308, { location: `/p/${bare[1]}/${bare[2] ?? ''}`, 'content-security-policy': CSP, 'x-content-type-options': 'nosniff' });
      return void res.end();
    }
    void admit(state, req, false)
      .then(async (v) => {
        if (!v.ok) {
          const { status, body } = rawRefusal(v.code, v.message);
          if (await sentOwnPage(req, res, status)) return;
          res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-security-policy': CSP, 'x-content-type-options': 'nosniff' });
          return void res.end(body);
        }
        const forget = v.session ? state.streams.add(v.session, () => res.destroy()) : undefined;
        const reached = await proxyHttp(req, res, target(state, v));
        forget?.();
        // A backend that stopped answering is asked for its instance again before the next request goes there.
        if (!reached) (isRemoteId(v.id) ? state.remote.forget(v.id) : state.verdicts.forget(v.id));
      })
      .catch(() => res.destroy());
  };
}

/** A raw HTTP refusal on a socket that never reached the app (an upgrade, a plaintext client on TLS). */
export function refuse(socket: Socket, code: ErrorCode, message: string): void {
  const { status, body } = rawRefusal(code, message);
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/** A WebSocket upgrade: the same admission as any `/p` request, then raw sockets piped. */
export function proxyUpgradeRoute(state: GatewayState) {
  return (req: IncomingMessage, socket: Socket, head: Buffer): void => {
    void admit(state, req, true)
      .then((v) => {
        if (!v.ok) return refuse(socket, v.code, v.code === 'NOT_FOUND' && !(req.url ?? '').startsWith('/p/') ? 'WebSockets are proxied only under /p/<id>/' : v.message);
        const session = v.session;
        proxyUpgrade(req, socket, head, target(state, v, true), (end) => (session ? state.streams.add(session, end) : () => {}));
      })
      .catch(() => socket.destroy());
  };
}
