import type { HttpBindings } from '@hono/node-server';
import type { Context } from 'hono';
import { TrellisError } from '../events/index.js';
import type { Caller, GatewayState } from './gateway-state.js';

type Ctx = Context<{ Bindings: HttpBindings }>;

/** The caller of this request (its address and session cookie). */
export const callerOf = (c: Ctx, state: GatewayState): Caller => state.caller(c.env.incoming.socket.remoteAddress, c.req.header('cookie'));

/** The request's JSON body; anything unparsable is a 400. An empty body reads as {}. */
export async function readJson(c: Ctx): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new TrellisError('INVALID_INPUT', `the request body is not valid JSON (${(err as Error).message})`);
  }
}
