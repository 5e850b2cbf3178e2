import { describe, expect, it } from 'vitest';
import { didYouMean, nearestIds, unknownIdWords } from './nearest-names.js';

describe('the nearest ids (issue 44: one rule for issue and session ids, commands and actions)', () => {
  const ids = ['045c9px9xjb5', '7rk2m0qzv1dd', '7rk2m0qzv1de'];

  it.each([
    ['one character off', '045c9px9xjbx', ['045c9px9xjb5']],
    ['one character dropped', '045c9px9xb5', ['045c9px9xjb5']],
    ['cut short (a prefix)', '045c', ['045c9px9xjb5']],
    ['cut short, two begin so', '7rk2m0', ['7rk2m0qzv1dd', '7rk2m0qzv1de']],
    ['near nothing', 'zzzzzzzzzzzz', []],
    ['a single character is no prefix', '0', []],
  ])('%s', (_what, typed, near) => {
    expect(nearestIds(typed, ids)).toEqual(near);
  });

  it('only the nearest of all: isue is issue, not also issues an edit further; iss begins both', () => {
    const commands = ['issue', 'issues', 'session', 'serve', 'sync'];
    expect(nearestIds('isue', commands)).toEqual(['issue']);
    expect(nearestIds('iss', commands)).toEqual(['issue', 'issues']);
    expect(nearestIds('issue', commands)).toEqual(['issues']);
  });

  it('words: one candidate, several, none', () => {
    expect(didYouMean(['a'])).toBe("; did you mean 'a'?");
    expect(didYouMean(['a', 'b', 'c'])).toBe("; did you mean 'a', 'b' or 'c'?");
    expect(didYouMean([])).toBe('');
    expect(unknownIdWords('issue', '045c9px9xjbx', ids)).toBe("no issue 045c9px9xjbx; did you mean '045c9px9xjb5'?");
    expect(unknownIdWords('session', 'zz', ids, '; ls lists them')).toBe('no session zz; ls lists them');
  });
});
