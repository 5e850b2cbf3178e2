import type { HttpBindings } from '@hono/node-server';
import { Hono } from 'hono';
import type { ProjectList } from '../store/host/project-list.js';
import { configRoutes } from './config-routes.js';
import type { GatewayState } from './gateway-state.js';
import { hostRunRoutes } from './host-run-routes.js';
import { hostRoutes } from './remote-host-routes.js';
import { adminStream } from './admin-stream.js';
import { ProjectFeed } from './project-feed.js';
import { registrationRoutes } from './registration-routes.js';

type Env = { Bindings: HttpBindings };

/**
 * The hub's admin routes: here the reconciled project list and its stream; registration and the directory
 * browser (registration-routes.ts), host operations (host-run-routes.ts), the config seam and icons
 * (config-routes.ts) are mounted from their own files, each calling one verb of `store/host/`. Every route
 * here needs admin scope (checked by the app before it routes).
 */
export function projectRoutes(state: GatewayState): Hono<Env> {
  const app = new Hono<Env>();
  const scoped = (list: ProjectList): ProjectList => (state.opts.only ? { ...list, projects: list.projects.filter((p) => p.id === state.opts.only) } : list);
  // Remote hosts' projects beside this machine's (issue 31); a single-project gateway shows none.
  const withRemote = (local: ProjectList): ProjectList =>
    state.opts.only ? local : { ...local, projects: [...local.projects, ...state.remote.rows()], hosts: state.remote.statuses() };
  const list = async () => scoped(withRemote(await state.projects.listProjects(state.hub())));

  app.get('/projects', async (c) => c.json(await list()));

  // A single-project gateway (`serve --public`) never connects to other hosts.
  const feed = new ProjectFeed(state.verdicts, list, state.opts.only ? undefined : state.remote);
  state.feed = feed;
  app.get('/projects/stream', (c) => adminStream(c, state, 'projects', (push) => feed.subscribe(push)));

  app.route('/', registrationRoutes(state));
  app.route('/', hostRunRoutes(state));
  app.route('/', configRoutes(state));
  app.route('/', hostRoutes(state));
  return app;
}
