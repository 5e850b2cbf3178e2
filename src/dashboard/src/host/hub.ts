import { computed, signal } from '@preact/signals';
import { apiBase, ApiError, delay } from '../api';

/**
 * The host side of the page. The same bundle runs at three places: `/` of `trellis serve` (a project),
 * `/p/<id>/` of a gateway (a project, proxied) and `/` of a gateway (the host home). The page tells them
 * apart by asking `health` next to itself: only the gateway says `role: "gateway"`. A page under
 * `/p/<id>/` whose probe is refused (401 not logged in, 404 backend not running) was served by the
 * gateway itself for exactly that reason, and says so.
 */
export type Where =
  | { readonly kind: 'hub' }
  | { readonly kind: 'project' }
  | { readonly kind: 'project-login'; readonly project: string }
  | { readonly kind: 'project-offline'; readonly project: string; readonly message: string };

/** Under a gateway, a project's page lives at `<hub>/p/<id>/`: the hub's base and the project id. */
export const underHub: { readonly base: string; readonly project: string } | null = (() => {
  const m = /^(.*\/)p\/([^/]+)\/$/.exec(apiBase);
  if (!m) return null;
  try {
    return { base: m[1]!, project: decodeURIComponent(m[2]!) };
  } catch {
    return null;
  }
})();

/** Where the hub's own routes are: next to the page at the host home, two folders up from a project's page. */
export const hubBase: string = underHub?.base ?? apiBase;

/**
 * The routes of the project's route table (`METHOD path`, as src/http/route-table.ts names them) this
 * page's login may use, as the gateway's GET /auth/status derives them from the table; null: every route
 * (`trellis serve`, or a gateway that does not say). The page offers an action only when its route is here.
 */
export const allowedRoutes = signal<ReadonlySet<string> | null>(null);

/** Whether this page's login may use the route `key` (`POST /api/sessions/:id/prompt`). */
export const mayUse = (key: string): boolean => allowedRoutes.value?.has(key) ?? true;

/**
 * Whether this page's login may use the issue write `key` on an issue of `store`: a local one as the row
 * says; a forge's (a write with the machine's forge token) only where /auth/status lists `key (forge)`,
 * the row's forgeScope (owner) that the backend checks too.
 */
export const mayWriteTo = (key: string, store: string): boolean => mayUse(store === 'local' ? key : `${key} (forge)`);

/**
 * Whether this page's login may run commands on the machine (spawn, type into a terminal, upload): the
 * table's spawn route, as a shorthand for the views that offer all of them or none.
 */
export const mayRunCommands = computed(() => mayUse('POST /api/sessions'));

async function refreshShellScope(project: string): Promise<void> {
  const res = await fetch(`${hubBase}auth/status?project=${encodeURIComponent(project)}`, { headers: { Accept: 'application/json' } }).catch(() => null);
  const body = res?.ok ? ((await res.json().catch(() => ({}))) as { shell?: boolean; routes?: string[] }) : {};
  allowedRoutes.value = Array.isArray(body.routes) ? new Set(body.routes) : null;
}

/** Asks `health` (with bounded retries on a dropped connection or 502/503/504) which page this is. */
export async function whereAmI(): Promise<Where> {
  for (let attempt = 0; ; attempt++) {
    try {
      const res = await fetch(`${apiBase}health`, { headers: { Accept: 'application/json' } });
      if (res.ok) {
        const body = (await res.json().catch(() => ({}))) as { role?: string };
        if (body.role === 'gateway') return { kind: 'hub' };
        if (underHub) await refreshShellScope(underHub.project);
        return { kind: 'project' };
      }
      if (underHub && res.status === 401) return { kind: 'project-login', project: underHub.project };
      if (underHub && res.status === 404) {
        const body = (await res.json().catch(() => ({}))) as { error?: { message?: string } };
        return { kind: 'project-offline', project: underHub.project, message: body.error?.message ?? 'this project has no running backend' };
      }
      if (attempt >= 4 || ![502, 503, 504].includes(res.status)) return { kind: 'project' };
    } catch {
      if (attempt >= 4) return { kind: 'project' };
    }
    await delay(200 * 2 ** attempt);
  }
}

/** Whether the backend behind this page answers its health check now (an offline project's page polls it). */
export async function backendAnswers(): Promise<boolean> {
  try {
    return (await fetch(`${apiBase}health`)).ok;
  } catch {
    return false;
  }
}

/** Set when a hub route answered 401 (a login expired or was revoked): the app shows the login form. */
export const needLogin = signal(false);

export interface HubAnswer<T> {
  readonly status: number;
  readonly body: T;
  readonly etag: string | null;
  /** The body as sent (a file's exact bytes, e.g. trellis.json with its formatting). */
  readonly text: string;
}

/**
 * One request to a hub route (`projects`, `fs`, `auth/...`), resolved for every status: views show a 412
 * or a 422 with its transcript rather than a bare error. Throws only when the gateway did not answer.
 * A 401 also raises `needLogin`. Writes are never retried.
 */
export async function hub<T = unknown>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<HubAnswer<T>> {
  let res: Response;
  try {
    res = await fetch(hubBase + path, {
      method,
      headers: { Accept: 'application/json', ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
  } catch (err) {
    throw new ApiError('NETWORK', `the gateway did not answer ${method} /${path}: ${(err as Error).message}`, 0);
  }
  const text = await res.text();
  let parsed: unknown = text;
  if ((res.headers.get('Content-Type') ?? '').includes('json') && text) {
    try {
      parsed = JSON.parse(text);
    } catch {}
  }
  // A wrong password typed into a form is that form's answer, not a login that ended.
  const wrongPassword = (parsed as { error?: { code?: string } } | null)?.error?.code === 'BAD_PASSWORD';
  if (res.status === 401 && path !== 'auth/login' && !wrongPassword) needLogin.value = true;
  return { status: res.status, body: parsed as T, etag: res.headers.get('ETag'), text };
}

/** The error a hub route answered with, as the views show it. */
export function errorOf(a: HubAnswer<unknown>, what: string): ApiError {
  const body = a.body as { error?: { code?: string; message?: string } } | null;
  const { error: e, ...details } = typeof body === 'object' && body !== null ? body : {};
  return new ApiError(e?.code ?? `HTTP_${a.status}`, e?.message ?? `${what} answered ${a.status}`, a.status, details);
}

export interface AuthStatus {
  readonly passwordSet: boolean;
  readonly admin: boolean;
  readonly loggedIn: boolean;
  /** Whether POST /auth/password would hear this caller: on this machine with no password yet, or an admin login. */
  readonly mayChangePassword?: boolean;
}

export const auth = signal<AuthStatus | null>(null);

export async function refreshAuth(): Promise<AuthStatus> {
  const a = await hub<AuthStatus>('GET', 'auth/status');
  if (a.status !== 200) throw errorOf(a, 'GET /auth/status');
  auth.value = a.body;
  needLogin.value = !a.body.admin && a.body.passwordSet;
  return a.body;
}

/** Logs in (the admin password, or with `project` that project's gate password or the admin one). */
export async function login(password: string, project?: string): Promise<void> {
  const a = await hub('POST', 'auth/login', { password, ...(project ? { project } : {}) });
  if (a.status !== 200) throw errorOf(a, 'POST /auth/login');
}

/**
 * Sets the admin password (the first one, from this machine) or changes it (naming the current one). The
 * gateway logs this page in anew and every other login out; the auth status is read again after it.
 */
export async function changeAdminPassword(password: string, current?: string): Promise<{ first: boolean }> {
  const a = await hub<{ first: boolean }>('POST', 'auth/password', { password, ...(current !== undefined ? { current } : {}) });
  if (a.status !== 200) throw errorOf(a, 'POST /auth/password');
  await refreshAuth();
  return a.body;
}

export async function logout(): Promise<void> {
  await hub('POST', 'auth/logout', {});
}

/**
 * Where to go after a login: a fragment of this page or a path on this origin only (never `//host` or a
 * scheme), so a crafted `next` cannot send the person elsewhere.
 */
export function safeNext(next: string | null): string {
  if (!next) return '#/projects';
  if (next.startsWith('#/')) return next;
  if (/^\/(?![/\\])[^\s]*$/.test(next)) return next;
  return '#/projects';
}

/**
 * Where `#/login?next=…` sends a caller who is logged in already: a view of this page only (a `#/` route,
 * never the login view itself); null when `next` is not one (then the caller stays on this page's home).
 */
export function nextRoute(next: string | null): string | null {
  const n = safeNext(next);
  if (!n.startsWith('#/')) return null;
  return /^#\/login(?:[/?]|$)/.test(n) ? '#/projects' : n;
}
