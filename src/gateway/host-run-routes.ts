import type { HttpBindings } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import { basename } from 'node:path';
import { isTrellisError } from '../events/index.js';
import { lastServed } from '../store/host/last-served.js';
import type { KnownProject } from '../store/host/project-list.js';
import { bodySchema, readJson } from '../http/body.js';
import { runDoctor, runInit, serveProject } from '../store/host/host-runs.js';
import { isRemoteId } from '../store/host/remote-projects.js';
import type { GatewayState } from './gateway-state.js';
import { projectOf } from './route-params.js';

/** The known project `:id`, or one that was only being served here (its serve stopped, its folder still there). */
function servedOrKnown(c: Context, state: GatewayState): KnownProject {
  try {
    return projectOf(c, state);
  } catch (err) {
    const id = c.req.param('id') ?? '';
    const last = isTrellisError(err) && err.code === 'NOT_FOUND' && !(state.opts.only && id !== state.opts.only) ? lastServed(state.opts.home, id) : null;
    if (!last) throw err;
    return last;
  }
}

const initBody = bodySchema((type) => type({ '+': 'reject', 'harness?': 'string' }));

/** Host operations on one project: the real `trellis init` and `doctor` (exit code and transcript), and a detached `serve`. */
export function hostRunRoutes(state: GatewayState): Hono<{ Bindings: HttpBindings }> {
  const app = new Hono<{ Bindings: HttpBindings }>();
  const home = state.opts.home;

  app.post('/projects/:id/init', async (c) => {
    const p = projectOf(c, state);
    return c.json(await runInit(home, p.root, await readJson(c, initBody, { optional: true }), state.opts.env));
  });
  app.post('/projects/:id/doctor', async (c) => {
    const id = c.req.param('id');
    if (isRemoteId(id)) return c.json(await state.remote.doctor(id));
    return c.json(await runDoctor(home, projectOf(c, state).root, state.opts.env));
  });
  app.post('/projects/:id/serve', async (c) => {
    const id = c.req.param('id');
    // Another host's project starts there, through its SSH connection (issue 31).
    if (isRemoteId(id)) return c.json(await state.remote.serve(id));
    return c.json(await serveProject(home, servedOrKnown(c, state), state.opts.env));
  });
  // A project's offline page: where it lives and whether it is registered, so it can offer to start or
  // register it. A project that was only being served is off the list, but its folder is remembered.
  app.get('/projects/:id/whereabouts', (c) => {
    const p = servedOrKnown(c, state);
    return c.json({ id: p.id, root: p.root, name: basename(p.root), cataloged: p.cataloged });
  });
  return app;
}
