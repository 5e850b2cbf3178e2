import { type, type Type } from 'arktype';
import { TrellisError } from '../../events/index.js';

/**
 * Every object a driver reads from its forge passes through the schema of the fields it reads, so a
 * forge that renamed or dropped one is said, naming the field, instead of listing empty issues: a write's
 * answer (`readAs`) fails loud; a listing's element (`readEach`) is left out with a note. The same schemas
 * check the recorded samples of each forge's published shapes (test/forge/recorded/).
 */
export function readAs<T>(schema: Type<T>, value: unknown, store: string, what: string): T {
  const out = schema(value);
  if (out instanceof type.errors) throw new TrellisError('FORGE_FAILED', `${store} answered ${what} this driver cannot read (${out.summary.replace(/\n/g, '; ')}); is "apiUrl" the forge's API root?`);
  return out as T;
}

/** What one listing page read: the items the driver can read, and one note per item left out. */
export interface ReadEach<T> {
  readonly items: T[];
  readonly notes: string[];
  /** Each left-out item's forge number, when it had a readable one (so a later read can clear its note). */
  readonly leftOut: { readonly number: number | null; readonly note: string; readonly raw: Record<string, unknown> }[];
}

/**
 * A list answer read one element at a time: an element `schema` refuses is left out with one note naming
 * the forge, the issue (`name` says which, from whatever of it is readable) and the field, and every other
 * element is kept (issue 39: a forge that drifted, say a field made optional, must not hide its whole
 * listing). Anything but an array still fails whole, as `readList` does.
 */
export function readEach<T>(schema: Type<T>, value: unknown, store: string, what: string, name: (raw: Record<string, unknown>) => { number: number | null; said: string }): ReadEach<T> {
  if (!Array.isArray(value)) throw new TrellisError('FORGE_FAILED', `${store} answered a list of ${what} that is not a JSON array; is "apiUrl" the forge's API root?`);
  const out: ReadEach<T> = { items: [], notes: [], leftOut: [] };
  for (const raw of value) {
    const read = schema(raw);
    if (!(read instanceof type.errors)) {
      out.items.push(read as T);
      continue;
    }
    const object = raw !== null && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
    const { number, said } = name(object);
    const fields = read.map((e) => `"${e.path.join('.') || '(the whole object)'}" ${e.problem}`).join('; ');
    const note = `${store}: ${said} is left out: this driver cannot read its ${fields}`;
    out.notes.push(note);
    out.leftOut.push({ number, note, raw: object });
  }
  return out;
}

/** A forge number read from a raw object's key, or null when it has none readable. */
export const numberAt = (raw: Record<string, unknown>, key: string): number | null => (typeof raw[key] === 'number' && Number.isInteger(raw[key]) ? (raw[key] as number) : null);

/** The issue a comment's `issue_url` names (GitHub's and Forgejo's …/issues/<n>), or null. */
export const issueOfUrl = (url: unknown): number | null => {
  const m = typeof url === 'string' ? /\/issues\/(\d+)$/.exec(url) : null;
  return m ? Number(m[1]) : null;
};

/** How a note names what it left out: `issue #7`, or the kind alone when no number could be read. */
export const named = (what: string, number: number | null): { number: number | null; said: string } => ({ number, said: number === null ? `${what} (its number unreadable)` : `${what} #${number}` });
