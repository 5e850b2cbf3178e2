import { signal } from '@preact/signals';

/**
 * Views live in the URL fragment (`#/board`, `#/node/auth/login?v=<hash>`, `#/issues?status=open`,
 * `#/issues/<id>`, `#/new-issue?node=<id>`), so a link is deep, back/forward work, and the page's own
 * path (which locates the API) never changes. Views added later (projects, sessions, login) are one more
 * case in `parseRoute` and one more entry in the app's view table.
 */
export interface Route {
  readonly view: 'board' | 'node' | 'issues' | 'issue' | 'new-issue' | 'sessions' | 'session' | 'eval' | 'scenario' | 'inbox' | 'missing';
  /** The rest of the path after the view: a node id or an issue id (decoded). */
  readonly arg: string;
  readonly query: URLSearchParams;
}

export function parseRoute(hash: string): Route {
  const raw = hash.replace(/^#\/?/, '');
  const q = raw.indexOf('?');
  const path = q < 0 ? raw : raw.slice(0, q);
  const query = new URLSearchParams(q < 0 ? '' : raw.slice(q + 1));
  const [head = '', ...rest] = path.split('/');
  const arg = safeDecode(rest.join('/'));
  switch (head) {
    case '':
    case 'board':
      return { view: 'board', arg: '', query };
    case 'node':
      return { view: arg ? 'node' : 'board', arg, query };
    case 'issues':
      return { view: arg ? 'issue' : 'issues', arg, query };
    case 'inbox':
      return { view: 'inbox', arg: '', query };
    case 'new-issue':
      return { view: 'new-issue', arg: '', query };
    case 'sessions':
      return { view: arg ? 'session' : 'sessions', arg, query };
    case 'eval':
      return { view: arg ? 'scenario' : 'eval', arg, query };
    default:
      return { view: 'missing', arg: path, query };
  }
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

export const route = signal<Route>(parseRoute(location.hash));
addEventListener('hashchange', () => (route.value = parseRoute(location.hash)));

/** Hrefs for the views. Node ids keep their slashes readable; issue ids are encoded (`#` in forge ids). */
export const href = {
  board: () => '#/board',
  node: (id: string, v?: string) => `#/node/${id.split('/').map(encodeURIComponent).join('/')}${v ? `?v=${encodeURIComponent(v)}` : ''}`,
  issues: (q?: Record<string, string>) => {
    const s = new URLSearchParams(Object.entries(q ?? {}).filter(([, v]) => v)).toString();
    return `#/issues${s ? `?${s}` : ''}`;
  },
  issue: (id: string) => `#/issues/${encodeURIComponent(id)}`,
  newIssue: (node?: string) => `#/new-issue${node ? `?node=${encodeURIComponent(node)}` : ''}`,
  sessions: () => '#/sessions',
  session: (id: string) => `#/sessions/${encodeURIComponent(id)}`,
  eval: () => '#/eval',
  inbox: () => '#/inbox',
  scenario: (id: string, scope?: string) => `#/eval/${id.split('/').map(encodeURIComponent).join('/')}${scope ? `?scope=${encodeURIComponent(scope)}` : ''}`,
};

export const go = (h: string) => {
  location.hash = h;
};

/** Changes the fragment without a history entry (filters as one types). */
export const replace = (h: string) => {
  history.replaceState(null, '', h);
  route.value = parseRoute(location.hash);
};
