import { type } from 'arktype';
import type { Context } from 'hono';
import { TrellisError } from '../events/index.js';

/** Reads a JSON body and validates it against an arktype schema; anything else is a 400 that says why. */
export async function readJson<S extends { infer: unknown; (data: unknown): unknown }>(c: Context, schema: S, opts: { optional?: boolean } = {}): Promise<S['infer']> {
  const text = await c.req.text();
  let raw: unknown = {};
  if (text.trim() !== '' || !opts.optional) {
    try {
      raw = JSON.parse(text);
    } catch (err) {
      throw new TrellisError('INVALID_INPUT', `the request body is not valid JSON (${(err as Error).message})`);
    }
  }
  const out = schema(raw);
  if (out instanceof type.errors) throw new TrellisError('INVALID_INPUT', `invalid request body: ${out.summary.replace(/\n/g, '; ')}`);
  return out as S['infer'];
}
