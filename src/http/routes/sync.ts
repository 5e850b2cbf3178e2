import { Hono } from 'hono';
import { syncProject } from '../../store/sync/verbs.js';
import { bodySchema, readJson } from '../body.js';
import { route } from '../route-table.js';
import type { AppContext } from '../context.js';

const syncBody = bodySchema((type) => type({ '+': 'reject', 'remote?': 'string', 'mode?': "'both' | 'push-only' | 'fetch-only'" }));

/** `POST /api/sync`: the same verb as `trellis sync`; answers its summary. */
export function syncRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  route(app, 'shell', 'POST', '/api/sync', async (c) => {
    const body = await readJson(c, syncBody, { optional: true });
    // No terminal behind a server: a remote that wants a password fails (502) instead of hanging.
    return c.json(await syncProject(ctx.project, { interactive: false, ...(body?.remote ? { remote: body.remote } : {}), ...(body?.mode ? { mode: body.mode } : {}) }));
  });
  return app;
}
