import type { HttpBindings } from '@hono/node-server';
import { Hono } from 'hono';
import { secureHeaders } from 'hono/secure-headers';
import { dashboardAssets, dashboardDistDir } from '../http/dashboard-assets.js';
import { limitBody } from '../http/body-limit.js';
import { TrellisError } from '../events/index.js';
import { notFound, onError } from '../http/errors.js';
import { answerRoutes } from './answer-routes.js';
import { authRoutes } from './auth-routes.js';
import type { GatewayState } from './gateway-state.js';
import { callerOf } from './hub-context.js';
import { notifyRoutes } from './notify-routes.js';
import { projectRoutes } from './project-routes.js';
import { CSP } from './proxy-headers.js';
import { pushRoutes } from './push-routes.js';
import { pwaRoutes } from './pwa-routes.js';
import { crossSiteRefusal } from './request-guard.js';

type Env = { Bindings: HttpBindings };

/** A year, subdomains included: a name served over TLS is served over TLS only. */
const HSTS = 'max-age=31536000; includeSubDomains';

/** Largest JSON body the hub's own routes read (proxied bodies stream, unlimited). */
const HUB_BODY_LIMIT = 1 << 20;

/** Whether `path` is one of `roots` or below one of them. */
const under =
  (...roots: string[]) =>
  (path: string): boolean =>
    roots.some((root) => path === root || path.startsWith(`${root}/`));

/** The hub's admin routes: the project list and its stream, registration and host operations, /fs, /hub/*. */
const needsAdmin = under('/projects', '/fs', '/hub');

/** The hub's own API paths: never answered with the dashboard page, even a folder-shaped one. */
const isHubApi = under('/projects', '/fs', '/hub', '/auth', '/health', '/p', '/waits');

/**
 * The host gateway's one Hono app (spec §4.3, DESIGN §10): cross-site defence on every request, then
 * authentication; the hub's own routes; every other GET of a folder (`/`) or of a hashed asset the dashboard
 * bundle, the same bytes and policy `trellis serve` answers with (the page at `/` is the host home and
 * finds the hub's API next to itself). `/p/:id/*` never reaches it: the server answers that ahead of the
 * app (proxy-route.ts), with the same checks, and the proxied backend serves the same bundle there.
 */
export function hubApp(state: GatewayState): Hono<Env> {
  const app = new Hono<Env>();

  // Every refusal is thrown as its code and answered by onError, the code's status from the one table.
  app.use(async (c, next) => {
    const hub = state.hubOrError();
    if ('broken' in hub) throw new TrellisError('HUB_CONFIG_BROKEN', hub.broken);
    const refusal = crossSiteRefusal(
      { method: c.req.method, host: c.req.header('host'), origin: c.req.header('origin'), secFetchSite: c.req.header('sec-fetch-site'), upgrade: false },
      state.allowedHosts(hub),
      state.opts.tls,
    );
    if (refusal) throw new TrellisError('FORBIDDEN', refusal);
    return next();
  });

  // HSTS over TLS only: sent on a plain-HTTP port it would pin every port of the name to https.
  app.use(secureHeaders({ contentSecurityPolicy: undefined, crossOriginResourcePolicy: false, strictTransportSecurity: state.opts.tls ? HSTS : false }));
  app.use(async (c, next) => {
    await next();
    c.header('Content-Security-Policy', CSP);
    c.header('X-Content-Type-Options', 'nosniff');
  });
  app.use(limitBody(HUB_BODY_LIMIT));
  app.use(async (c, next) => {
    const path = c.req.path;
    if (!needsAdmin(path)) return next();
    const caller = callerOf(c, state);
    if (caller.admin) return next();
    if (caller.grant) throw new TrellisError('FORBIDDEN', 'this login has no admin scope');
    throw new TrellisError('UNAUTHENTICATED', caller.passwordSet ? 'log in first (POST /auth/login)' : 'admin scope is implicit only for clients on this machine');
  });

  app.get('/health', (c) => c.json({ ok: true, role: 'gateway', instanceId: state.instanceId, only: state.opts.only ?? null }));
  app.route('/', authRoutes(state));
  app.route('/', projectRoutes(state));
  app.route('/', notifyRoutes(state));
  app.route('/', pushRoutes(state));
  app.route('/', answerRoutes(state));
  app.route('/', pwaRoutes());

  app.on(['GET', 'HEAD'], '*', dashboardAssets(dashboardDistDir(), isHubApi));
  app.notFound(notFound);
  app.onError(onError);
  return app;
}
