import { type, type Type } from 'arktype';
import { TrellisError } from '../../events/index.js';

/**
 * Every object a driver reads from its forge passes through the schema of the fields it reads, so a
 * forge that renamed or dropped one fails loud, naming the field, instead of listing empty issues. The
 * same schemas check the recorded samples of each forge's published shapes (test/forge/recorded/).
 */
export function readAs<T>(schema: Type<T>, value: unknown, store: string, what: string): T {
  const out = schema(value);
  if (out instanceof type.errors) throw new TrellisError('FORGE_FAILED', `${store} answered ${what} this driver cannot read (${out.summary.replace(/\n/g, '; ')}); is "apiUrl" the forge's API root?`);
  return out as T;
}

/** A list answer: each element read by `schema`; anything but an array fails the same way. */
export function readList<T>(schema: Type<T>, value: unknown, store: string, what: string): T[] {
  if (!Array.isArray(value)) throw new TrellisError('FORGE_FAILED', `${store} answered a list of ${what} that is not a JSON array; is "apiUrl" the forge's API root?`);
  return value.map((v) => readAs(schema, v, store, what));
}
