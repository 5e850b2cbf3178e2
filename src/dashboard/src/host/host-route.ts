import { signal } from '@preact/signals';

/**
 * The host home's views, in the URL fragment like the project views (deep links, back/forward):
 * `#/projects`, `#/projects/<id>` (one project: start, doctor, init, its trellis.json), `#/register`
 * (the directory browser), `#/password` (set or change the admin password) and `#/login?next=<fragment or path>`.
 */
export interface HostRoute {
  readonly view: 'projects' | 'project' | 'register' | 'login' | 'inbox' | 'password' | 'missing';
  readonly arg: string;
  readonly query: URLSearchParams;
}

export function parseHostRoute(hash: string): HostRoute {
  const raw = hash.replace(/^#\/?/, '');
  const q = raw.indexOf('?');
  const path = q < 0 ? raw : raw.slice(0, q);
  const query = new URLSearchParams(q < 0 ? '' : raw.slice(q + 1));
  const [head = '', ...rest] = path.split('/');
  let arg = rest.join('/');
  try {
    arg = decodeURIComponent(arg);
  } catch {}
  switch (head) {
    case '':
    case 'projects':
      return { view: arg ? 'project' : 'projects', arg, query };
    case 'register':
      return { view: 'register', arg: '', query };
    case 'inbox':
      return { view: 'inbox', arg: '', query };
    case 'login':
      return { view: 'login', arg: '', query };
    case 'password':
      return { view: 'password', arg: '', query };
    default:
      return { view: 'missing', arg: path, query };
  }
}

export const hostRoute = signal<HostRoute>(parseHostRoute(location.hash));
addEventListener('hashchange', () => (hostRoute.value = parseHostRoute(location.hash)));

export const hostHref = {
  projects: () => '#/projects',
  project: (id: string) => `#/projects/${encodeURIComponent(id)}`,
  inbox: () => '#/inbox',
  register: (path?: string) => `#/register${path ? `?path=${encodeURIComponent(path)}` : ''}`,
  password: () => '#/password',
  login: (next?: string) => `#/login${next ? `?next=${encodeURIComponent(next)}` : ''}`,
};
