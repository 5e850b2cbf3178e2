import type { HttpBindings } from '@hono/node-server';
import { type } from 'arktype';
import { Hono } from 'hono';
import { readJson } from '../http/body.js';
import { runDoctor, runInit, serveProject } from '../store/host/host-runs.js';
import { isRemoteId } from '../store/host/remote-projects.js';
import type { GatewayState } from './gateway-state.js';
import { projectOf } from './route-params.js';

const initBody = type({ '+': 'reject', 'harness?': 'string' });

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
    return c.json(await serveProject(home, projectOf(c, state), state.opts.env));
  });
  return app;
}
