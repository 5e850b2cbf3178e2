import { TrellisError } from '../../events/index.js';

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
