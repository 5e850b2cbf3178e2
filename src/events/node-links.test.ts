import { describe, expect, it } from 'vitest';
import { isNodeId, issueNodes, nodeLinks } from './node-links.js';

describe('node links', () => {
  it('finds [[links]] in prose, deduped, in order, ignoring a |label', () => {
    expect(nodeLinks('see [[auth/login]] and [[billing|the bill]], again [[auth/login]]')).toEqual(['auth/login', 'billing']);
  });

  it('ignores links that are not node ids', () => {
    expect(nodeLinks('[[../etc/passwd]] [[a b]] [[x.md]] [[]]')).toEqual([]);
  });

  it('unions explicit ids first with prose links', () => {
    expect(issueNodes(['billing'], 'about [[auth/login]] and [[billing]]')).toEqual(['billing', 'auth/login']);
  });

  it.each([
    ['auth/login', true],
    ['index', true],
    ['a/b.c/d-e_f', true],
    ['../up', false],
    ['/abs', false],
    ['trailing/', false],
    ['x.md', false],
    ['has space', false],
    ['', false],
  ])('isNodeId(%j) is %s', (id, want) => expect(isNodeId(id)).toBe(want));
});
