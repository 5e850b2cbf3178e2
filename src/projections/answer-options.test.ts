import { describe, expect, it } from 'vitest';
import { likelyOptions, shortLabel } from './answer-options.js';

describe('the options a notification offers', () => {
  it.each<[string[], number[]]>([
    [['Yes', "Yes, and don't ask again for curl commands in /tmp/w", 'No'], [0, 2]],
    [['Yes', 'No'], [0, 1]],
    [['Allow once', 'Allow always', 'Reject'], [0, 2]],
    [['Red', 'Green', 'Blue'], [0, 1]],
    [['Yes, I trust this folder', 'No, exit'], [0, 1]],
    [['Only'], [0]],
  ])('%j → %j', (options, picked) => {
    expect(likelyOptions(options, 2)).toEqual(picked);
  });

  it('shortens at a word, keeping the dialog’s own words', () => {
    expect(shortLabel('Yes')).toBe('Yes');
    expect(shortLabel("Yes, and don't ask again for curl commands in /tmp/w")).toBe("Yes, and don't ask again…");
    expect(shortLabel('x'.repeat(40))).toBe(`${'x'.repeat(27)}…`);
    expect(shortLabel("Yes, and don't ask again for curl commands").length).toBeLessThanOrEqual(28);
  });
});
