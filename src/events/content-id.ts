const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * An id derived from content, for events whose writer handed in none: two 32-bit FNV-1a lanes (with
 * different offsets and primes) over the JSON of `parts`, 30 bits of each in Crockford base32, after
 * an `h`: 13 characters, so never equal to a 12-character random id. Pure: no clock, no randomness.
 * Two events get one id only if they say the same thing, by the same author, at the same millisecond
 * and clock.
 */
export function contentId(parts: unknown): string {
  const text = JSON.stringify(parts);
  let a = 0x811c9dc5;
  let b = 0xcbf29ce4;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c, 0x5bd1e995) >>> 0;
  }
  let out = 'h';
  for (const lane of [a, b]) for (let i = 0; i < 6; i++) out += ALPHABET[(lane >>> (i * 5)) & 31];
  return out;
}
