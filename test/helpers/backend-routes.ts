import { Hono } from 'hono';
import { projectApp } from '../../src/http/app.js';
import { rowOf, type Row } from '../../src/http/route-table.js';
import { LiveProject } from '../../src/store/board/live.js';
import { openProject } from '../../src/store/compose/open-project.js';

/** The real per-project app, built (nothing started) over the repository at `dir`. */
export function builtApp(dir: string): Hono {
  const project = openProject(dir);
  return projectApp(project, new LiveProject(project), 'route-walk');
}

/** The routes of `app` (its middleware left out: Hono registers `use` as method ALL) as `METHOD path`. */
export const routesOf = (app: Hono): { method: string; path: string }[] =>
  app.routes.filter((r) => r.method !== 'ALL').map((r) => ({ method: r.method, path: r.path }));

/** The routes of `app` that the route table has no row for. */
export const unrowed = (app: Hono): string[] => routesOf(app).filter((r) => !rowOf(r.method, r.path)).map((r) => `${r.method} ${r.path}`);

export interface Reached {
  readonly row: Row | null;
  /** The pane socket's own test of its query, as its handler reads it. */
  readonly readOnly: boolean;
  readonly status: number;
}

/**
 * The backend's own router over the real app's routes, each handler replaced by one that records which
 * route it is: the same routes, middleware paths and order, so the same router (Hono picks it from them)
 * matches a path the same way. `reach` sends a request as @hono/node-server builds it (a WHATWG Request
 * from `http://<host>` and the raw target; a backslash in the path is its 400).
 */
export function recordingRouter(app: Hono): { reach(method: string, target: string): Promise<Reached>; routers(): [string, string] } {
  const rec = new Hono();
  let last: { row: Row | null; readOnly: boolean } | null = null;
  for (const r of app.routes) {
    if (r.method === 'ALL') rec.use(r.path, async (_c, next) => next());
    else {
      const row = rowOf(r.method, r.path) ?? null;
      rec.on(r.method, r.path, (c) => {
        last = { row, readOnly: c.req.query('mode') === 'read' };
        return c.body(null, 200);
      });
    }
  }
  return {
    /** The router each chose (a SmartRouter names the one it settled on at its first match): the same, or the comparison is void. */
    routers() {
      app.router.match('GET', '/');
      rec.router.match('GET', '/');
      return [app.router.name, rec.router.name];
    },
    async reach(method, target) {
      last = null;
      const q = target.indexOf('?');
      if ((q < 0 ? target : target.slice(0, q)).includes('\\')) return { row: null, readOnly: false, status: 400 };
      const res = await rec.fetch(new Request(`http://127.0.0.1:4000${target}`, { method }));
      const seen = last as { row: Row | null; readOnly: boolean } | null;
      return { row: seen?.row ?? null, readOnly: seen?.readOnly ?? false, status: res.status };
    },
  };
}
