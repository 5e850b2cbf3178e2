import type { HttpBindings } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import { TrellisError } from '../events/index.js';
import { bodySchema, readJson } from '../http/body.js';
import type { GatewayState } from './gateway-state.js';
import { callerOf } from './hub-context.js';

type Env = { Bindings: HttpBindings };

/** A PushSubscription's JSON: an https endpoint and its two keys (base64url). */
const subscriptionBody = bodySchema((type) => type({
  endpoint: '0 < string <= 2048',
  'expirationTime?': 'number | null',
  keys: { p256dh: '/^[A-Za-z0-9_-]{80,100}={0,2}$/', auth: '/^[A-Za-z0-9_-]{16,32}={0,2}$/' },
}));
const endpointBody = bodySchema((type) => type({ '+': 'reject', endpoint: '0 < string <= 2048' }));

/**
 * Web Push (issue 32), admin scope (`/hub/*`): the hub's VAPID public key for `pushManager.subscribe`,
 * and this login's subscriptions. A subscription belongs to the login that made it and ends with it.
 */
export function pushRoutes(state: GatewayState): Hono<Env> {
  const app = new Hono<Env>();
  const push = () => {
    if (!state.notifier) throw new TrellisError('NOT_SUPPORTED', 'this gateway sends no notifications');
    return state.notifier.push;
  };
  const loginOf = (c: Context<Env>): string => {
    const caller = callerOf(c, state);
    return caller.passwordSet ? caller.sessionId! : 'loopback';
  };

  app.get('/hub/push/key', (c) => c.json({ publicKey: push().publicKey() }));
  app.get('/hub/push/subscriptions', (c) => c.json({ count: push().countOf(loginOf(c)) }));
  app.post('/hub/push/subscriptions', async (c) => {
    const sub = await readJson(c, subscriptionBody);
    let url: URL | undefined;
    try {
      url = new URL(sub.endpoint);
    } catch {
      /* named below */
    }
    if (url?.protocol !== 'https:') throw new TrellisError('INVALID_INPUT', 'endpoint must be the https:// URL the browser’s push service gave (PushSubscription.endpoint)');
    push().add(loginOf(c), { endpoint: url.href, keys: { p256dh: sub.keys.p256dh, auth: sub.keys.auth } });
    return c.json({ ok: true }, 201);
  });
  app.delete('/hub/push/subscriptions', async (c) => {
    const { endpoint } = await readJson(c, endpointBody);
    if (!push().remove(loginOf(c), endpoint)) throw new TrellisError('NOT_FOUND', 'this login holds no subscription with that endpoint');
    return c.body(null, 204);
  });
  return app;
}
