import type { HttpBindings } from '@hono/node-server';
import { Hono } from 'hono';
import { homedir } from 'node:os';
import { bodySchema, readJson } from '../http/body.js';
import { forgetProject } from '../store/host/forget-project.js';
import { browse } from '../store/host/fs-browse.js';
import { registerProject } from '../store/host/register-project.js';
import type { GatewayState } from './gateway-state.js';

const registerBody = bodySchema((type) => type({ '+': 'reject', path: 'string', 'gitInit?': 'boolean', 'init?': { '+': 'reject', 'harness?': 'string' } }));

/** Registering and forgetting projects, and the directory browser the register form walks. */
export function registrationRoutes(state: GatewayState): Hono<{ Bindings: HttpBindings }> {
  const app = new Hono<{ Bindings: HttpBindings }>();
  const home = state.opts.home;

  app.post('/projects', async (c) => {
    const r = await registerProject(home, await readJson(c, registerBody), state.opts.env);
    return c.json({ project: await state.projects.projectRow(state.hub(), r.project), transcript: r.transcript }, 201);
  });

  app.delete('/projects/:id', async (c) => {
    await forgetProject(home, { id: c.req.param('id') });
    return c.body(null, 204);
  });

  app.get('/fs', (c) => c.json(browse(c.req.query('path') || homedir())));
  return app;
}
