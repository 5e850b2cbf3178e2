import type { HttpBindings } from '@hono/node-server';
import { Hono } from 'hono';
import { bodySchema, readJson } from '../http/body.js';
import { addHost, readHosts, removeHost } from '../store/host/hosts.js';
import type { GatewayState } from './gateway-state.js';

const hostBody = bodySchema((type) => type({ '+': 'reject', name: 'string', destination: 'string', 'trellis?': 'string', 'sshConfig?': 'string' }));

/** The registered hosts (issue 31): the same store verbs as `trellis hosts add|ls|rm`; admin scope (under /hub). */
export function hostRoutes(state: GatewayState): Hono<{ Bindings: HttpBindings }> {
  const app = new Hono<{ Bindings: HttpBindings }>();
  const home = state.opts.home;
  const statuses = () => new Map(state.remote.statuses().map((s) => [s.name, s]));

  app.get('/hub/hosts', (c) => {
    const now = statuses();
    return c.json({ hosts: readHosts(home).map((h) => ({ ...h, ...(now.get(h.name) ?? { state: 'connecting' }) })) });
  });
  app.post('/hub/hosts', async (c) => {
    const host = await addHost(home, await readJson(c, hostBody));
    state.remote.sync();
    return c.json({ host }, 201);
  });
  app.delete('/hub/hosts/:name', async (c) => {
    await removeHost(home, c.req.param('name'));
    // Its connection and forwards close now, not at the next look at the list.
    state.remote.sync();
    return c.body(null, 204);
  });
  return app;
}
