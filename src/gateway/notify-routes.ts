import type { HttpBindings } from '@hono/node-server';
import { Hono } from 'hono';
import { bodySchema, readJson } from '../http/body.js';
import { readQuietSettings, writeQuietSettings } from '../store/host/notify-writes.js';
import { etagOf, revisionOf } from './route-params.js';
import type { GatewayState } from './gateway-state.js';
import { adminStream } from './admin-stream.js';

type Env = { Bindings: HttpBindings };

/** The page's quiet settings: muted project ids, and quiet hours `HH:MM`–`HH:MM` or null for none. */
const quietBody = bodySchema((type) => type({ '+': 'reject', mute: 'string[] <= 1000', quietHours: type({ '+': 'reject', from: 'string', to: 'string' }).or('null') }));

/**
 * `GET /hub/notify/stream`: the notifier's events as server-sent events (`event: notify`), for a page that
 * shows desktop notifications while it is open. Admin scope (the app checks `/hub/*`); a login that ends
 * ends the stream within a second, as the project stream does.
 */
export function notifyRoutes(state: GatewayState): Hono<Env> {
  const app = new Hono<Env>();
  app.get('/hub/notify', (c) => {
    const { revision, ...settings } = readQuietSettings(state.opts.home);
    return c.json(settings, 200, { ETag: etagOf(revision), 'Cache-Control': 'no-store' });
  });
  app.put('/hub/notify', async (c) => {
    const expected = revisionOf(c, 'GET /hub/notify');
    const { revision } = await writeQuietSettings(state.opts.home, expected, await readJson(c, quietBody));
    return c.json({ ok: true, revision }, 200, { ETag: etagOf(revision) });
  });
  app.get('/hub/notify/stream', (c) => adminStream(c, state, 'notify', (push) => state.notifier?.listen((e) => push(JSON.stringify(e))), ': listening\n\n'));
  return app;
}
