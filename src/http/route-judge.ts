import { RegExpRouter } from 'hono/router/reg-exp-router';
import { SmartRouter } from 'hono/router/smart-router';
import { TrieRouter } from 'hono/router/trie-router';
import { getPath, getQueryParam } from 'hono/utils/url';
import { PERSON_SCOPES, ROUTE_TABLE, scopeCovers, scopeRank, type Row, type Scope } from './route-table.js';

export { scopeCovers };

/**
 * The route a request will reach in the backend, judged the way the backend routes it: its URL built as
 * @hono/node-server builds it (WHATWG `new URL`), its path taken as Hono takes it (`getPath`: decodeURI,
 * `%2F` kept encoded, case and slashes as sent), matched by Hono's own router over the route table's rows.
 * A path whose parse would move it (a dot segment, plain or `%2e`-encoded; a backslash, which
 * node-server refuses anyway) is refused, never resolved: no legitimate page or client sends one.
 */
export type Judgement =
  | { readonly ok: false; readonly message: string }
  | {
      readonly ok: true;
      /** The path and query to forward: what the backend will route, as judged. */
      readonly path: string;
      /** The row the request reaches, the highest-scoped of those matched; null: no route (deny). */
      readonly row: Row | null;
      /** What the caller must hold: the row's scope, lowered to read for a pane socket opened read-only. */
      readonly scope: Scope | null;
    };

/** The same router class a `new Hono()` uses, holding the table's rows as its handlers. */
const router = (() => {
  const r = new SmartRouter<Row>({ routers: [new RegExpRouter(), new TrieRouter()] });
  for (const row of ROUTE_TABLE) r.add(row.method, row.path, row);
  return r;
})();

/** A path the URL parser leaves as it is (no escapes, no backslash; its dot segments refused before). */
const PLAIN = /^\/[A-Za-z0-9/_.~-]*$/;

/** A segment that the URL parser resolves: `.` or `..`, any of its dots written `%2e`. */
const DOT_SEGMENT = /(?:^|\/)(?:\.|%2e){1,2}(?:\/|$)/i;

/**
 * Judgements of recent requests: a page repeats the same few (every 304 of the board is one), and a
 * judgement depends on nothing but its method and target. Bounded: emptied when full.
 */
const recent = new Map<string, Judgement>();
const RECENT_MAX = 2048;

/** Judges `method` on `pathAndQuery` (a project's path, `/p/<id>` stripped) as the backend will route it. */
export function judgeRoute(method: string, pathAndQuery: string): Judgement {
  const key = `${method} ${pathAndQuery}`;
  let j = recent.get(key);
  if (j === undefined) {
    if (recent.size >= RECENT_MAX) recent.clear();
    recent.set(key, (j = judge(method, pathAndQuery)));
  }
  return j;
}

function judge(method: string, pathAndQuery: string): Judgement {
  const cut = pathAndQuery.search(/[?#]/);
  const rawPath = cut < 0 ? pathAndQuery : pathAndQuery.slice(0, cut);
  let path = rawPath;
  let forward = pathAndQuery;
  let href: string | undefined;
  if (DOT_SEGMENT.test(rawPath)) return { ok: false, message: `the path ${rawPath} has a dot segment (. or ..): send the path it means` };
  if (!PLAIN.test(rawPath)) {
    if (rawPath.includes('\\')) return { ok: false, message: `the path ${rawPath} has a backslash; send it percent-encoded (%5C) if it is part of a name` };
    // The backend's URL (node-server's `new URL`) and path (Hono's getPath) from the same functions.
    const url = new URL(`http://gateway${pathAndQuery.startsWith('/') ? '' : '/'}${pathAndQuery}`);
    href = url.href;
    path = getPath({ url: href } as Request);
    forward = `${url.pathname}${url.search}`;
  }
  const matched = router.match(method === 'HEAD' ? 'GET' : method, path)[0] as unknown as [Row, unknown][];
  let row: Row | null = null;
  for (const [r] of matched) if (!row || scopeRank(r.scope) > scopeRank(row.scope)) row = r;
  if (!row) return { ok: true, path: forward, row: null, scope: null };
  let scope: Scope = row.scope;
  if ('readOnlyWhenModeRead' in row && getQueryParam(href ?? new URL(`http://gateway${forward}`).href, 'mode') === 'read') scope = 'read';
  return { ok: true, path: forward, row, scope };
}

/** The scopes a person holding `held` has, lowest first. */
export const scopesUpTo = (held: Scope): Scope[] => PERSON_SCOPES.filter((s) => scopeCovers(held, s));
