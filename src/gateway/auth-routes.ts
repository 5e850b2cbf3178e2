import type { HttpBindings } from '@hono/node-server';
import { Hono } from 'hono';
import { deleteCookie, setCookie } from 'hono/cookie';
import { HTTPException } from 'hono/http-exception';
import { TooManyAttemptsError, TrellisError } from '../events/index.js';
import { setAdminPassword } from '../store/host/admin-password.js';
import { verifyPassword } from '../store/host/hub-config.js';
import { gateOf } from '../store/host/project-list.js';
import type { Caller, GatewayState } from './gateway-state.js';
import { callerOf, readJson } from './hub-context.js';
import { attemptKey } from './login-sessions.js';
import { allowedRoutes, heldScope } from './door-scope.js';
import { scopeCovers, scopesUpTo } from '../http/route-judge.js';

/**
 * POST /auth/login {password, project?}: the admin password (or, with `project`, that project's gate
 * password) buys a server-side session, always under a fresh id. Attempts are rate-limited per client
 * (an IPv4 address, or an IPv6 /64: see attemptKey) and per scope.
 * POST /auth/logout ends the session. GET /auth/status says who the caller is.
 * POST /auth/password {password, current?} sets the admin password from the page (see passwordRefusal).
 */
export function authRoutes(state: GatewayState): Hono<{ Bindings: HttpBindings }> {
  const app = new Hono<{ Bindings: HttpBindings }>();
  const cookieOptions = () => ({ httpOnly: true, sameSite: 'Lax' as const, path: '/', secure: state.opts.tls, ...(state.opts.tls ? { prefix: 'host' as const } : {}) });
  const baseName = 'trellis_session';

  app.get('/auth/status', (c) => {
    const caller = callerOf(c, state);
    // With ?project=<id>: what this caller may do there, from the route table (the page offers only the
    // routes listed in `routes`; `scopes` and `shell` say the same in brief).
    const project = c.req.query('project');
    const held = project === undefined ? (caller.admin ? 'owner' : 'data') : heldScope(caller, project);
    const shell = scopeCovers(held, 'shell') && (project === undefined || state.projectRefusal(caller, project) === null);
    const opens = project !== undefined && state.projectRefusal(caller, project) === null;
    const scope = project === undefined ? {} : { scopes: opens ? scopesUpTo(held) : [], routes: opens ? allowedRoutes(caller, project) : [] };
    // mayChangePassword: the page offers the password form only to whom POST /auth/password would answer.
    const mayChangePassword = caller.passwordSet ? !!caller.grant?.admin && (state.opts.tls || caller.loopback) : caller.loopback;
    return c.json({ passwordSet: caller.passwordSet, admin: caller.admin, loggedIn: !!caller.grant, projects: [...(caller.grant?.projects ?? [])], shell, ...scope, mayChangePassword });
  });

  app.post('/auth/login', async (c) => {
    const client = attemptKey(c.env.incoming.socket.remoteAddress ?? '?');
    const body = await readJson(c);
    const password = (body as { password?: unknown }).password;
    const project = (body as { project?: unknown }).project;
    if (typeof password !== 'string' || (project !== undefined && typeof project !== 'string')) {
      throw new TrellisError('INVALID_INPUT', 'send {"password": "...", "project"?: "<id>"}');
    }
    const hub = state.hub();
    if (!hub.adminPassword) throw new TrellisError('NO_PASSWORD', "no admin password is set; run 'trellis dashboard password' on this machine");
    const gate = typeof project === 'string' ? gateOf(hub, project) : undefined;
    const hash = typeof gate === 'object' ? gate.password : hub.adminPassword;
    // Counted per address and per scope, before the (slow, asynchronous) check: no parallel burst slips past.
    const scope = `${client} ${typeof gate === 'object' ? `project:${project as string}` : 'admin'}`;
    const wait = state.limiter.attempt(scope);
    if (wait > 0) throw new TooManyAttemptsError(`too many failed logins from ${client}; try again in ${wait} s`, wait);
    if (!(await verifyPassword(password, hash))) throw new TrellisError('BAD_PASSWORD', 'wrong password');
    state.limiter.succeed(scope);
    const grant = typeof gate === 'object' ? { admin: false, project: project as string } : { admin: true };
    // A fresh session id at every login; the one the browser came with (if any) is revoked.
    setCookie(c, baseName, state.sessions.rotate(callerOf(c, state).sessionId, grant), cookieOptions());
    return c.json({ ok: true, admin: grant.admin });
  });

  app.post('/auth/password', async (c) => {
    const caller = callerOf(c, state);
    const refused = passwordRefusal(caller, c.req.header('origin'), c.req.header('content-type'), state.opts.tls);
    if (refused) throw refused;
    const body = await readJson(c);
    const { password, current } = body as { password?: unknown; current?: unknown };
    if (typeof password !== 'string' || (current !== undefined && typeof current !== 'string')) {
      throw new TrellisError('INVALID_INPUT', 'send {"password": "<new>", "current"?: "<current>"}');
    }
    // A change names the current password: counted as a login attempt is (same client, admin scope),
    // before the slow check, so the form is no faster way to guess than the login.
    const scope = `${attemptKey(c.env.incoming.socket.remoteAddress ?? '?')} admin`;
    if (caller.passwordSet) {
      const wait = state.limiter.attempt(scope);
      if (wait > 0) throw new TooManyAttemptsError(`too many failed attempts from this client; try again in ${wait} s`, wait);
    }
    const { first } = await setAdminPassword(state.opts.home, { password, proof: { kind: 'current', current } });
    if (caller.passwordSet) state.limiter.succeed(scope);
    // Every login ends with the old password; the person who changed it stays logged in, under a fresh id.
    state.passwordChanged();
    setCookie(c, baseName, state.sessions.create({ admin: true }), cookieOptions());
    return c.json({ ok: true, first });
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

/**
 * Who may set the admin password through the gateway (the gateway is a door to a shell). Only the page
 * itself: a browser's request carries the page's Origin (a foreign one is refused before this, by the
 * hub's cross-site check) and a JSON body, which no cross-site form can send; a client with no Origin is
 * a terminal, and the terminal has `trellis dashboard password`. With no password yet: a client on this
 * machine only (anyone else would become admin). With one: an admin login, which must also name the
 * current password (a borrowed, unlocked browser is not enough), over TLS or from this machine (the two
 * passwords never cross a network in clear).
 */
export function passwordRefusal(caller: Caller, origin: string | undefined, contentType: string | undefined, tls: boolean): TrellisError | HTTPException | null {
  if (!origin) return new TrellisError('FORBIDDEN', "the admin password is set from the gateway's own page (a request with its Origin); on this machine's terminal, run 'trellis dashboard password'");
  // The request's media type, not its content: HTTP's own 415, which onError answers as INVALID_INPUT.
  if (!/^application\/json\b/i.test(contentType ?? '')) return new HTTPException(415, { message: 'send the password as JSON (Content-Type: application/json)' });
  if (!caller.passwordSet) {
    return caller.loopback ? null : new TrellisError('FORBIDDEN', 'the first admin password can only be set from this machine (a loopback client)');
  }
  if (!caller.grant?.admin) return new TrellisError('UNAUTHENTICATED', 'log in with the admin password first');
  // The current and the new password would cross the network in clear: only over TLS, or on this machine.
  if (!tls && !caller.loopback) return new TrellisError('HTTPS_REQUIRED', 'the admin password is changed over https (hub.json tls) or from this machine, never in clear over the network');
  return null;
}
