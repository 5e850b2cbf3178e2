import { describe, expect, it } from 'vitest';
import { plainText, searchSnippet } from './search-snippet.js';

describe('search snippets in plain text (issue 34: raw "## Ranking" showed in results)', () => {
  it('drops heading hashes, emphasis, link targets, bullets, quotes, fences and table rules; keeps the words', () => {
    const md = '# Search\n\n## Ranking\n\nResults are **ranked** by _title_ first, see [the guide](https://x/g) and `score()`.\n\n- one\n2. two\n> quoted\n\n```ts\ncode here\n```\n\n| a | b |\n|---|---|\n| c | d |\n';
    expect(plainText(md)).toBe('Search Ranking Results are ranked by title first, see the guide and score(). one two quoted code here a b c d');
  });

  it('keeps what only looks like a mark: a snake_case name, an asterisk in arithmetic, a hash inside a line', () => {
    expect(plainText('The max_free_mb key; 2 * 3 = 6; issue #12 stays.')).toBe('The max_free_mb key; 2 * 3 = 6; issue #12 stays.');
  });

  it('cuts around the first word searched for, with ellipses only where text was cut', () => {
    const md = `## Ranking\n\n${'lorem '.repeat(20)}synonyms are folded ${'ipsum '.repeat(30)}`;
    const s = searchSnippet(md, 'SYNONYMS');
    expect(s.startsWith('…')).toBe(true);
    expect(s.endsWith('…')).toBe(true);
    expect(s).toContain('synonyms are folded');
    expect(s).not.toContain('#');
    expect(searchSnippet('## Ranking\n\nShort.', 'short')).toBe('Ranking Short.');
    expect(searchSnippet('## Ranking\n\nShort.', 'absent')).toBe('Ranking Short.');
  });
});
