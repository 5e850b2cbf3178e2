import { syncRoutes } from './routes/sync.js';
import { Hono } from 'hono';
import { secureHeaders } from 'hono/secure-headers';
import { requireRoot } from '../store/project/repository.js';
import type { LiveProject } from '../store/board/live.js';
import type { Project } from '../store/compose/open-project.js';
import type { AppContext } from './context.js';
import { dashboardAssets, dashboardDistDir } from './dashboard-assets.js';
import { sameSiteOnly } from './origin.js';
import { limitBody } from './body-limit.js';
import { route } from './route-table.js';
import { notFound, onError } from './errors.js';
import { coreRoutes } from './routes/core.js';
import { evalRoutes } from './routes/eval.js';
import { evidenceRoutes } from './routes/evidence.js';
import { graphRoutes } from './routes/graph.js';
import { issueRoutes } from './routes/issues.js';
import { sessionRoutes } from './routes/sessions.js';
import { specRoutes } from './routes/specs.js';
import { sessionIoRoutes } from './routes/session-io.js';
import { uploadRoutes } from './routes/uploads.js';
import { appWebSockets } from './websocket.js';
import { sessionPaneTargets } from '../store/sessions/log/session-panes.js';
import { Tmux } from '../store/sessions/tmux/tmux.js';

/** Largest JSON request body; evidence uploads have their own, larger limit. */
export const JSON_LIMIT_BYTES = 1 << 20;

/**
 * The app for `project`, answering as instance `instanceId` (in-process serve and the supervisor's child
 * alike). Building it starts nothing: the session supervisors are started by the entry that serves it
 * (`http/child-main.ts`, `http/serve.ts`), which also stops them.
 */
export function projectApp(project: Project, live: LiveProject, instanceId: string): Hono {
  return createApp({ project, live, instance: { instanceId, root: requireRoot(project), startedAt: project.now().toISOString() } });
}

/** The per-project HTTP API (spec §4.1, §4.2). Routes are thin: parse, call a verb, render. */
export function createApp(ctx: AppContext): Hono {
  const app = new Hono();
  // Before anything else: loopback Host names only (DNS rebinding), on reads too; every write and
  // WebSocket upgrade (the pane socket among them) from a page of another origin is refused: a form can
  // POST text/plain here from any site, and the backend reads JSON whatever the Content-Type. Reads stay
  // open to loopback-addressed requests (CORS keeps their answers private to the browser).
  app.use(sameSiteOnly);
  // Plain HTTP on loopback: no HSTS (it would pin every port of the name to https).
  app.use(secureHeaders({ crossOriginResourcePolicy: false, strictTransportSecurity: false }));
  const jsonLimit = limitBody(JSON_LIMIT_BYTES);
  app.use('/api/*', async (c, next) => {
    // Evidence and uploads have their own, larger limits.
    if (c.req.path === '/api/evidence' || c.req.path === '/api/uploads') return next();
    return jsonLimit(c, next);
  });
  app.route('/', coreRoutes(ctx));
  app.route('/', graphRoutes(ctx));
  app.route('/', specRoutes(ctx));
  app.route('/', issueRoutes(ctx));
  app.route('/', evidenceRoutes(ctx));
  app.route('/', evalRoutes(ctx));
  app.route('/', sessionRoutes(ctx));
  app.route('/', sessionIoRoutes(ctx.paneTargets ?? sessionPaneTargets(ctx.project, Tmux.forHome().socket), appWebSockets(app)));
  app.route('/', uploadRoutes(ctx));
  app.route('/', syncRoutes(ctx));
  // Last: every other GET is the dashboard page (or one of its assets), paired with this API.
  const assets = dashboardAssets(dashboardDistDir());
  route(app, 'read', 'GET', '/*', assets);
  route(app, 'read', 'HEAD', '/*', assets);
  app.notFound(notFound);
  app.onError(onError);
  return app;
}
