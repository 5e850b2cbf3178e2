/**
 * What every stream kind's hand-written event parser shares. Hand-written rather than arktype schemas:
 * these run on every CLI read, and importing arktype costs ~180 ms of start-up (measured; see bench/).
 */

/** An event read back from `event.json`, or a one-line reason it is not one. */
export type ParsedEvent<E> = { ok: true; event: E } | { ok: false; reason: string };

/** Parses stored JSON and checks it with `problem` (null: the value is an event of the kind). */
export function parseStoredEvent<E>(text: string, problem: (raw: unknown) => string | null): ParsedEvent<E> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: `is not JSON (${(err as Error).message})` };
  }
  const reason = problem(raw);
  return reason === null ? { ok: true, event: raw as E } : { ok: false, reason };
}

export type Check = (v: unknown) => boolean;
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
export const str = (v: unknown): v is string => typeof v === 'string';
export const strs: Check = (v) => Array.isArray(v) && v.every(str);
