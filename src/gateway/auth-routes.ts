import type { HttpBindings } from '@hono/node-server';
import { Hono } from 'hono';
import { deleteCookie, setCookie } from 'hono/cookie';
import { errorBody } from '../http/errors.js';
import { verifyPassword } from '../store/host/hub-config.js';
import { gateOf } from '../store/host/project-list.js';
import type { GatewayState } from './gateway-state.js';
import { callerOf, readJson } from './hub-context.js';
import { attemptKey } from './login-sessions.js';
import { hasShell } from './shell-scope.js';

/**
 * POST /auth/login {password, project?}: the admin password (or, with `project`, that project's gate
 * password) buys a server-side session, always under a fresh id. Attempts are rate-limited per client
 * (an IPv4 address, or an IPv6 /64: see attemptKey) and per scope.
 * POST /auth/logout ends the session. GET /auth/status says who the caller is.
 */
export function authRoutes(state: GatewayState): Hono<{ Bindings: HttpBindings }> {
  const app = new Hono<{ Bindings: HttpBindings }>();
  const cookieOptions = () => ({ httpOnly: true, sameSite: 'Lax' as const, path: '/', secure: state.opts.tls, ...(state.opts.tls ? { prefix: 'host' as const } : {}) });
  const baseName = 'trellis_session';

  app.get('/auth/status', (c) => {
    const caller = callerOf(c, state);
    // With ?project=<id>: whether this caller may run commands there (the page hides what it may not do).
    const project = c.req.query('project');
    const shell = project === undefined ? caller.admin : hasShell(caller, project);
    return c.json({ passwordSet: caller.passwordSet, admin: caller.admin, loggedIn: !!caller.grant, projects: [...(caller.grant?.projects ?? [])], shell });
  });

  app.post('/auth/login', async (c) => {
    const client = attemptKey(c.env.incoming.socket.remoteAddress ?? '?');
    const body = await readJson(c);
    const password = (body as { password?: unknown }).password;
    const project = (body as { project?: unknown }).project;
    if (typeof password !== 'string' || (project !== undefined && typeof project !== 'string')) {
      return c.json(errorBody('INVALID_INPUT', 'send {"password": "...", "project"?: "<id>"}'), 400);
    }
    const hub = state.hub();
    if (!hub.adminPassword) return c.json(errorBody('NO_PASSWORD', "no admin password is set; run 'trellis dashboard password' on this machine"), 409);
    const gate = typeof project === 'string' ? gateOf(hub, project) : undefined;
    const hash = typeof gate === 'object' ? gate.password : hub.adminPassword;
    // Counted per address and per scope, before the (slow, asynchronous) check: no parallel burst slips past.
    const scope = `${client} ${typeof gate === 'object' ? `project:${project as string}` : 'admin'}`;
    const wait = state.limiter.attempt(scope);
    if (wait > 0) return c.json(errorBody('TOO_MANY_ATTEMPTS', `too many failed logins from ${client}; try again in ${wait} s`), 429, { 'Retry-After': String(wait) });
    if (!(await verifyPassword(password, hash))) return c.json(errorBody('BAD_PASSWORD', 'wrong password'), 401);
    state.limiter.succeed(scope);
    const grant = typeof gate === 'object' ? { admin: false, project: project as string } : { admin: true };
    // A fresh session id at every login; the one the browser came with (if any) is revoked.
    setCookie(c, baseName, state.sessions.rotate(callerOf(c, state).sessionId, grant), cookieOptions());
    return c.json({ ok: true, admin: grant.admin });
  });

  app.post('/auth/logout', (c) => {
    const caller = callerOf(c, state);
    // This login's push subscriptions end with it (a phone handed on stops hearing about this hub).
    if (caller.sessionId) state.notifier?.push.dropLogin(caller.sessionId);
    state.sessions.revoke(caller.sessionId);
    deleteCookie(c, baseName, cookieOptions());
    return c.body(null, 204);
  });
  return app;
}
