import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, git, tempRepo } from '../../test/helpers/repo.js';
import { resolveAuthor } from './input.js';
import { writeAuthor } from '../store/project/author.js';

afterAll(cleanupRepos);

describe('who a write is by: one rule for the CLI and the page (issue 34: page writes were filed as "human")', () => {
  it('the name given, else the session, else git’s user.name of the project; a blank name counts as none', () => {
    const dir = tempRepo();
    expect(writeAuthor({ by: ' ann ', session: 's-1' }, dir)).toBe('ann');
    expect(writeAuthor({ by: '  ', session: 's-1' }, dir)).toBe('s-1');
    expect(writeAuthor({}, dir)).toBe('Test Author');
    // The CLI's --by and $TRELLIS_SESSION land on the same function.
    expect(resolveAuthor(undefined, dir, {})).toBe('Test Author');
    expect(resolveAuthor(undefined, dir, { TRELLIS_SESSION: 's-2' })).toBe('s-2');
    expect(resolveAuthor('bob', dir, { TRELLIS_SESSION: 's-2' })).toBe('bob');
    expect(() => resolveAuthor('', dir, {})).toThrow('--by takes an author name');
  });

  it('each project answers with its own git user.name', () => {
    const other = tempRepo();
    git(other, 'config', 'user.name', 'Zoë Example');
    expect(writeAuthor({}, other)).toBe('Zoë Example');
  });
});
