import type { HttpBindings } from '@hono/node-server';
import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { listProjects, type ProjectList } from '../store/host/project-list.js';
import { configRoutes } from './config-routes.js';
import type { GatewayState } from './gateway-state.js';
import { hostRunRoutes } from './host-run-routes.js';
import { hostRoutes } from './remote-host-routes.js';
import { callerOf } from './hub-context.js';
import { ProjectFeed } from './project-feed.js';
import { registrationRoutes } from './registration-routes.js';

type Env = { Bindings: HttpBindings };

const HEARTBEAT_MS = 15_000;
const AUTH_RECHECK_MS = 1_000;

/**
 * The hub's admin routes: here the reconciled project list and its stream; registration and the directory
 * browser (registration-routes.ts), host operations (host-run-routes.ts), the config seam and icons
 * (config-routes.ts) are mounted from their own files, each calling one verb of `store/host/`. Every route
 * here needs admin scope (checked by the app before it routes).
 */
export function projectRoutes(state: GatewayState): Hono<Env> {
  const app = new Hono<Env>();
  const home = state.opts.home;
  const scoped = (list: ProjectList): ProjectList => (state.opts.only ? { ...list, projects: list.projects.filter((p) => p.id === state.opts.only) } : list);
  // Remote hosts' projects beside this machine's (issue 31); a single-project gateway shows none.
  const withRemote = (local: ProjectList): ProjectList =>
    state.opts.only ? local : { ...local, projects: [...local.projects, ...state.remote.rows()], hosts: state.remote.statuses() };
  const list = async () => scoped(withRemote(await listProjects(home, state.hub())));

  app.get('/projects', async (c) => c.json(await list()));

  // A single-project gateway (`serve --public`) never connects to other hosts.
  const feed = new ProjectFeed(home, list, state.opts.only ? undefined : state.remote);
  state.feed = feed;
  app.get('/projects/stream', (c) =>
    streamSSE(c, async (stream) => {
      const queue: string[] = [];
      let wake: (() => void) | undefined;
      let closed = false;
      const unsubscribe = feed.subscribe((body) => {
        queue.push(body);
        wake?.();
      });
      stream.onAbort(() => {
        closed = true;
        wake?.();
      });
      // A login that ends while its stream is open (logout, a new admin password) ends the stream too,
      // within a second (a stat of hub.json and a map lookup): the list never reaches a caller who may no
      // longer read it, and the page learns to ask for the login again.
      const admitted = () => callerOf(c, state).admin;
      const heartbeat = setInterval(() => void stream.write(': ping\n\n'), HEARTBEAT_MS);
      const recheck = setInterval(() => !admitted() && wake?.(), AUTH_RECHECK_MS);
      try {
        while (!closed) {
          if (!admitted()) break;
          const body = queue.shift();
          if (body !== undefined) await stream.writeSSE({ event: 'projects', data: body });
          else await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
        }
      } finally {
        clearInterval(heartbeat);
        clearInterval(recheck);
        unsubscribe();
      }
    }),
  );

  app.route('/', registrationRoutes(state));
  app.route('/', hostRunRoutes(state));
  app.route('/', configRoutes(state));
  app.route('/', hostRoutes(state));
  return app;
}
