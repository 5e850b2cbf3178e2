import type { Context } from 'hono';
import { TrellisError } from '../events/index.js';

type Ark = typeof import('arktype');

/**
 * A request body's schema, compiled on first use. Loading arktype and compiling the routes' schemas was most of
 * a serve child's start-up CPU (a profile of one start: @ark/schema and @ark/util ahead of everything else), paid
 * at every start and every hot reload, and by the gateway; a route that is never called never compiles its schema.
 */
export interface BodySchema<S> {
  readonly build: (type: Ark['type']) => S;
}

const compiled = new WeakMap<BodySchema<unknown>, unknown>();
let ark: Promise<Ark> | undefined;
let loaded: Ark | undefined;

/** A schema for `readJson` (or `compileSchema`), built by `build` from arktype's `type` the first time it is used. */
export const bodySchema = <S>(build: (type: Ark['type']) => S): BodySchema<S> => ({ build });

/** The compiled schema, and arktype's error class to tell a refusal by (for a caller that validates by itself). */
export async function compileSchema<S>(schema: BodySchema<S>): Promise<{ check: S; errors: Ark['type']['errors'] }> {
  loaded ??= await (ark ??= import('arktype'));
  return compiledNow(schema);
}

/** compileSchema's answer for a schema a caller has already awaited it for (a handler that cannot wait). */
export function compiledNow<S>(schema: BodySchema<S>): { check: S; errors: Ark['type']['errors'] } {
  if (!loaded) throw new Error('compiledNow before any compileSchema: await compileSchema(schema) first');
  if (!compiled.has(schema)) compiled.set(schema, schema.build(loaded.type));
  return { check: compiled.get(schema) as S, errors: loaded.type.errors };
}

/** Reads a JSON body and validates it against an arktype schema; anything else is a 400 that says why. */
export async function readJson<S extends { infer: unknown; (data: unknown): unknown }>(c: Context, schema: BodySchema<S>, opts: { optional?: boolean } = {}): Promise<S['infer']> {
  const text = await c.req.text();
  let raw: unknown = {};
  if (text.trim() !== '' || !opts.optional) {
    try {
      raw = JSON.parse(text);
    } catch (err) {
      throw new TrellisError('INVALID_INPUT', `the request body is not valid JSON (${(err as Error).message})`);
    }
  }
  const { check, errors } = await compileSchema(schema);
  const out = check(raw);
  if (out instanceof errors) throw new TrellisError('INVALID_INPUT', `invalid request body: ${out.summary.replace(/\n/g, '; ')}`);
  return out as S['infer'];
}
