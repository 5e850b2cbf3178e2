import { TrellisError } from '../../events/index.js';
import { unknownIdWords } from '../../projections/nearest-names.js';

// Crockford's base32, lower case: URL-safe, no `#` (never confusable with a forge id `<host>#<n>`), and no
// letters that read as digits.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const ID_LENGTH = 12;

/** A new local thread id: 60 random bits, so ids minted in different clones do not collide. */
export function newThreadId(random: (n: number) => Uint8Array): string {
  const bytes = random(ID_LENGTH);
  let id = '';
  for (let i = 0; i < ID_LENGTH; i++) id += ALPHABET[bytes[i]! & 31];
  return id;
}

// Accepts ids made elsewhere (fixtures, other tools) as long as they are one safe ref path component.
const LOCAL_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export const isLocalId = (s: string): boolean => LOCAL_ID.test(s);

/** An id that cannot name a local thread reads as "no such thread", never as a path to follow. */
export function requireLocalId(id: string): string {
  if (!isLocalId(id)) throw new TrellisError('THREAD_NOT_FOUND', `no issue ${JSON.stringify(id)}`);
  return id;
}

/**
 * The refusal of an id nothing has (issue 44), one rule for issues and sessions: `no issue <id>; did you
 * mean '<id>'?` naming the nearest known ids (edit distance; a shortened id counts as near), else
 * `otherwise`. The known ids are read only here, on the way to the error, so a found id costs nothing.
 */
export async function unknownId(code: 'THREAD_NOT_FOUND' | 'SESSION_NOT_FOUND', what: string, id: string, known: () => Promise<Iterable<string>>, otherwise = ''): Promise<TrellisError> {
  return new TrellisError(code, unknownIdWords(what, id, await known(), otherwise));
}
