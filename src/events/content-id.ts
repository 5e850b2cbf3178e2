/**
 * An id derived from content, for events whose writer handed in none: 64 bits of FNV-1a over the JSON
 * of `parts`, in Crockford base32 (URL-safe, 13 characters). Pure: no clock, no randomness. Two events
 * get one id only if they say the same thing, by the same author, at the same millisecond and clock.
 */
export function contentId(parts: unknown): string {
  const text = JSON.stringify(parts);
  // Two 32-bit FNV-1a lanes with different offsets stand in for one 64-bit hash (no BigInt per char).
  let a = 0x811c9dc5;
  let b = 0xcbf29ce4;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c, 0x01000193 ^ 0x5bd1e995) >>> 0;
  }
  const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
  let out = '';
  let bits = a * 0x100000000 + b;
  // 64 bits do not fit a double exactly; the low 2 of `a` are dropped (~62 bits), plenty to tell events apart.
  for (let i = 0; i < 12; i++) {
    out += ALPHABET[Math.floor(bits % 32)];
    bits = Math.floor(bits / 32);
  }
  return `h${out}`;
}
