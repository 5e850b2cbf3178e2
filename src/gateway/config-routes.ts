import type { HttpBindings } from '@hono/node-server';
import { Hono } from 'hono';
import { bodySchema, readJson } from '../http/body.js';
import { readRawConfig } from '../store/host/config-seam.js';
import { readHubIcon, setHubIcon, setProjectIcon, writeProjectConfig } from '../store/host/config-writes.js';
import { harnessNames } from '../store/sessions/agents/index.js';
import { AUTO_HARNESS } from '../store/sessions/agents/default-harness.js';
import type { GatewayState } from './gateway-state.js';
import { etagOf, projectOf, revisionOf } from './route-params.js';

/** trellis.json holds one JSON object at its top level. */
const configBody = bodySchema((type) => type('object').narrow((v, ctx) => !Array.isArray(v) || ctx.mustBe('a JSON object (trellis.json holds one at the top level), not an array')));
/** An icon is a short string (an emoji, a name), or null to clear it. */
const iconBody = bodySchema((type) => type({ '+': 'reject', icon: '0 < string <= 2048 | null' }));

const CONFIG_ETAG = 'the config you read';

/** The config seam (a project's committed trellis.json, revision-checked), icons, and the harness names `init` offers. */
export function configRoutes(state: GatewayState): Hono<{ Bindings: HttpBindings }> {
  const app = new Hono<{ Bindings: HttpBindings }>();
  const home = state.opts.home;
  const written = (revision: string) => [{ ok: true, revision }, 200, { ETag: etagOf(revision) }] as const;

  app.get('/projects/:id/config', (c) => {
    const raw = readRawConfig(projectOf(c, state).root);
    return c.body(raw.text, 200, { 'Content-Type': 'application/json; charset=utf-8', ETag: etagOf(raw.revision), 'Cache-Control': 'no-store' });
  });
  app.put('/projects/:id/config', async (c) => {
    const p = projectOf(c, state);
    const expected = revisionOf(c, CONFIG_ETAG);
    const { revision } = await writeProjectConfig(p.root, expected, (await readJson(c, configBody)) as Record<string, unknown>);
    return c.json(...written(revision));
  });
  app.put('/projects/:id/icon', async (c) => {
    const p = projectOf(c, state);
    const expected = revisionOf(c, CONFIG_ETAG);
    const { revision } = await setProjectIcon(p.root, expected, (await readJson(c, iconBody)).icon);
    return c.json(...written(revision));
  });

  // The harness choice the dashboard offers for `init` (the same names `trellis init --harness` takes),
  // `auto` first: the first agent installed at each spawn, else shell — what a newcomer wants.
  app.get('/hub/harnesses', (c) => c.json({ harnesses: [AUTO_HARNESS, ...harnessNames()] }));

  app.get('/hub/icon', (c) => {
    const { icon, revision } = readHubIcon(home);
    return c.json({ icon }, 200, { ETag: etagOf(revision) });
  });
  app.put('/hub/icon', async (c) => {
    const expected = revisionOf(c, 'GET /hub/icon');
    const { revision } = await setHubIcon(home, expected, (await readJson(c, iconBody)).icon);
    return c.json(...written(revision));
  });
  return app;
}
