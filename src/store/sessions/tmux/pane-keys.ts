import { TrellisError } from '../../../events/index.js';

/** Named keys a client may send (tmux `send-keys` names); everything else is refused. */
const NAMED = new Set([
  'Escape', 'Enter', 'Tab', 'BTab', 'BSpace', 'Space', 'Up', 'Down', 'Left', 'Right', 'Home', 'End',
  'PageUp', 'PageDown', 'PPage', 'NPage', 'Insert', 'Delete', 'IC', 'DC',
  ...Array.from({ length: 12 }, (_, i) => `F${i + 1}`),
]);
/** Control chords C-a .. C-z, plus the usual punctuation ones (C-\ quits, C-] escapes telnet-likes). */
const CHORD = /^C-([a-z]|\\|\]|\[|@|_)$/;
/** Most keys one request may send. */
export const MAX_KEYS = 64;
/** Most bytes one `{hex}` request may send. */
export const MAX_HEX_BYTES = 4096;

/** Checks a list of key names against the allowlist; a 400 names the first one refused. */
export function checkKeys(keys: readonly string[]): readonly string[] {
  if (keys.length === 0) throw new TrellisError('INVALID_INPUT', 'keys must name at least one key');
  if (keys.length > MAX_KEYS) throw new TrellisError('INVALID_INPUT', `at most ${MAX_KEYS} keys per request`);
  for (const k of keys) {
    if (!NAMED.has(k) && !CHORD.test(k)) {
      throw new TrellisError('INVALID_INPUT', `unknown key ${JSON.stringify(k)}; keys are ${[...NAMED].join(', ')} and C-a..C-z (use {hex} for anything else)`);
    }
  }
  return keys;
}

/** Parses `{hex}` (`1b5b41`, spaces allowed) into bytes; a 400 says what is wrong. */
export function parseHex(hex: string): Buffer {
  const clean = hex.replace(/\s+/g, '');
  if (clean.length === 0 || clean.length % 2 !== 0 || !/^[0-9a-fA-F]+$/.test(clean)) {
    throw new TrellisError('INVALID_INPUT', 'hex must be an even number of hex digits, e.g. "1b5b41"');
  }
  if (clean.length / 2 > MAX_HEX_BYTES) throw new TrellisError('INVALID_INPUT', `hex is limited to ${MAX_HEX_BYTES} bytes`);
  return Buffer.from(clean, 'hex');
}

/** `send-keys -H` arguments for raw bytes: each byte as two hex digits, sent exactly. */
export const hexArgs = (bytes: Uint8Array): string[] => Array.from(bytes, (b) => b.toString(16).padStart(2, '0'));
