import { Hono } from 'hono';
import { basename } from 'node:path';
import { readPlugins, slashCommands, guidanceCatalog } from '../../store/project/plugins.js';
import { requireRoot } from '../../store/project/repository.js';
import { projectIdentity } from '../../store/host/config-seam.js';
import type { AppContext } from '../context.js';
import { route } from '../route-table.js';
import { requestAuthor } from '../author.js';

/** Readiness, identity and the read-only catalogs. */
export function coreRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  const root = () => requireRoot(ctx.project);
  const plugins = () => readPlugins(root(), ctx.project.settings().pluginRoot);

  // Touches no git and no disk: a supervisor polls it to decide whether a child is up.
  route(app, 'read', 'GET', '/health', (c) => c.json({ ok: true, instanceId: ctx.instance.instanceId, pid: process.pid }));
  route(app, 'read', 'GET', '/api/instance', (c) =>
    c.json({
      instanceId: ctx.instance.instanceId,
      root: ctx.instance.root,
      // The name a person knows the project by (trellis.json's `name`, else its folder's), as the host list shows it.
      name: projectIdentity(ctx.instance.root, basename(ctx.instance.root)).name,
      pid: process.pid,
      startedAt: ctx.instance.startedAt,
      apiUrl: process.env.TRELLIS_API_URL || null,
    }),
  );
  route(app, 'read', 'GET', '/api/settings', (c) => {
    const s = ctx.project.settings();
    return c.json({ root: root(), specRoot: s.specRoot, trunk: s.trunk, harness: s.harness, pluginRoot: s.pluginRoot, forges: s.forges, sources: s.sources });
  });
  // Who a write from this page is filed as: the door's stamp, else `human` (http/author.ts).
  route(app, 'read', 'GET', '/api/author', (c) => c.json({ by: requestAuthor(c, ctx.project) }));
  route(app, 'read', 'GET', '/api/plugins', (c) => c.json(plugins().filter((p) => p.surfaces.includes('command'))));
  route(app, 'read', 'GET', '/api/slash-commands', (c) => c.json(slashCommands(root(), plugins())));
  route(app, 'read', 'GET', '/api/guidance', (c) => c.json(guidanceCatalog(root(), plugins())));
  return app;
}
