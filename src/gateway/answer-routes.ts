import type { HttpBindings } from '@hono/node-server';
import { Hono } from 'hono';
import { TrellisError } from '../events/index.js';
import { bodySchema, readJson } from '../http/body.js';
import { scopeCovers } from '../http/route-table.js';
import { doorAuthorOf, NOBODY_KNOWN } from './door-author.js';
import { ANSWER_ROW, heldScope, judgeAtDoor } from './door-scope.js';
import type { GatewayState } from './gateway-state.js';
import { callerOf } from './hub-context.js';
import type { Notifier } from './notify-hub.js';

type Env = { Bindings: HttpBindings };

const optionBody = bodySchema((type) => type({ '+': 'reject', option: '0 < string <= 500' }));

/**
 * Answering a told wait from its notification (issue 43), exactly once (gateway/wait-answers.ts):
 *
 * - `POST /waits/:wait/answer {option}`, the service worker's, with the login's cookie: judged as the
 *   door judges the answer route it stands for (`POST /p/<project>/api/sessions/<id>/answer`, shell scope
 *   in the route table), so a login without shell is refused here as it would be there.
 * - `POST /waits/:wait/answer/:token`, ntfy's and a webhook's: the token is the capability, like a
 *   login. It is only ever minted for a target in hub.json (the owner's configuration) and bound to one
 *   wait and one option; the answer it makes is the owner's, filed as `human`.
 */
export function answerRoutes(state: GatewayState): Hono<Env> {
  const app = new Hono<Env>();
  const notifier = (): Notifier => {
    if (!state.notifier) throw new TrellisError('NOT_SUPPORTED', 'this gateway sends no notifications');
    return state.notifier;
  };
  const waitOf = (id: string) => {
    const w = notifier().answers.get(id);
    if (!w) throw new TrellisError('WAIT_ENDED', `this gateway knows no wait ${id}: it has ended, or the gateway restarted since it was told; open the session's page`);
    return w;
  };

  app.post('/waits/:wait/answer', async (c) => {
    const { option } = await readJson(c, optionBody);
    const w = waitOf(c.req.param('wait'));
    const caller = callerOf(c, state);
    const refused = state.projectRefusal(caller, w.project);
    if (refused === 401) throw new TrellisError('UNAUTHENTICATED', 'log in first (POST /auth/login)');
    if (refused === 403) throw new TrellisError('FORBIDDEN', 'this login does not open that project');
    // Judged as the route it stands for: the same verdict the door gives the page's answer.
    const door = judgeAtDoor(caller, w.project, ANSWER_ROW.method, `/api/sessions/${encodeURIComponent(w.session)}/answer`);
    if (!door.ok) throw new TrellisError(door.code, door.message);
    const author = doorAuthorOf(caller, w.project, c.env.incoming.socket.remoteAddress, c.env.incoming.headers);
    return c.json(await notifier().answers.answer(c.req.param('wait'), option, 'a notification', { author, scope: heldScope(caller, w.project) }));
  });

  app.post('/waits/:wait/answer/:token', async (c) => {
    const answers = notifier().answers;
    waitOf(c.req.param('wait'));
    const { option, from } = answers.optionOfToken(c.req.param('wait'), c.req.param('token'));
    // The owner configured the target this token was minted for: the owner's scope, which covers the row.
    if (!scopeCovers('owner', ANSWER_ROW.scope)) throw new TrellisError('FORBIDDEN', `${ANSWER_ROW.what} needs more than the owner holds`);
    return c.json(await answers.answer(c.req.param('wait'), option, from, { author: NOBODY_KNOWN, scope: 'owner' }));
  });
  return app;
}
