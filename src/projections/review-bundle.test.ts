import { describe, expect, it } from 'vitest';
import { diffSize, LONG_DIFF_LINES } from './review-bundle.js';

describe('a review file’s diff size (issue 34: long diffs fold)', () => {
  const head = 'diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n';
  it('counts added and removed lines, not the file headers', () => {
    expect(diffSize(`${head}-old\n+new\n+more\n same\n`)).toEqual({ additions: 2, deletions: 1, lines: 8, long: false });
    expect(diffSize('')).toEqual({ additions: 0, deletions: 0, lines: 0, long: false });
  });
  it(`is long past ${LONG_DIFF_LINES} lines, counting the headers`, () => {
    const body = (n: number) => `${head}${'+x\n'.repeat(n)}`;
    expect(diffSize(body(LONG_DIFF_LINES - 4)).long).toBe(false);
    expect(diffSize(body(LONG_DIFF_LINES - 3)).long).toBe(true);
  });
});
