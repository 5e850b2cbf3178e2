import { describe, expect, it } from 'vitest';
import { terminalText } from './terminal-text.js';

/** Issue 30, row 5: invisible formatting characters are shown like control characters. */
describe('terminalText shows what would make text read otherwise than it is', () => {
  const rows: [string, string, string][] = [
    ['right-to-left override (Trojan Source)', 'access = "user\u202e \u2066// admin\u2069"', 'access = "user\\u202e \\u2066// admin\\u2069"'],
    ['every bidi embedding, override and isolate', '\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069', '\\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068\\u2069'],
    ['zero-width and direction marks', 'a\u200bb\u200cc\u200ed\u200fe\u061cf', 'a\\u200bb\\u200cc\\u200ed\\u200fe\\u061cf'],
    ['a zero-width joiner between letters', 'ad\u200dmin', 'ad\\u200dmin'],
    ['word joiner, invisible operators, BOM, soft hyphen, annotations', '\u2060\u2061\u2064\ufeff\u00ad\ufff9\ufffb', '\\u2060\\u2061\\u2064\\ufeff\\xad\\ufff9\\ufffb'],
    ['control characters as before', '\u001b[31m\r\u009b', '\\x1b[31m\\r\\x9b'],
  ];
  it.each(rows)('%s', (_name, text, shown) => expect(terminalText(text)).toBe(shown));

  it('text people write stays as it is: accents, CJK, Arabic and Hebrew letters, emoji sequences with their joiners', () => {
    const text = 'café 日本 مرحبا שלום 👩‍💻 👨‍👩‍👧 🏳️‍🌈 👍🏽\n\tcolumn';
    expect(terminalText(text)).toBe(text);
  });
});
