import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { nodeIdOf, parseSpecNode, partsOf, specMeta } from './spec-node.js';

const parse = (text: string, id = 'auth/login') => parseSpecNode(id, `specs/${id}.md`, text, (x) => (x === 'auth/login' ? 'auth' : null), parseYaml);

describe('spec nodes', () => {
  it.each([
    ['auth/login.md', 'auth/login'],
    ['auth/index.md', 'auth'],
    ['index.md', 'index'],
    ['a/b/c.md', 'a/b/c'],
    ['notes.txt', null],
    ['bad name.md', null],
  ])('nodeIdOf(%j) is %j', (path, id) => expect(nodeIdOf(path)).toBe(id));

  it('reads title, status and depends from front matter, links and parts from the prose', () => {
    const node = parse(`---
title: Login
status: draft
depends: [auth, billing]
---
# Ignored heading

Intro with [[auth/session]].

## Rules
- one

## Errors
See [[billing]].
`);
    expect(specMeta(node)).toEqual({
      id: 'auth/login',
      path: 'specs/auth/login.md',
      title: 'Login',
      status: 'draft',
      depends: ['auth', 'billing'],
      parent: 'auth',
      links: ['auth/session', 'billing'],
    });
    expect(node.parts).toEqual([
      { title: 'Rules', body: '- one' },
      { title: 'Errors', body: 'See [[billing]].' },
    ]);
    expect(node.body.startsWith('# Ignored heading')).toBe(true);
  });

  it('falls back to the first heading, then the last id segment, for the title', () => {
    expect(parse('# From heading\n').title).toBe('From heading');
    expect(parse('no heading').title).toBe('login');
  });

  it.each([
    ['unclosed front matter', '---\ntitle: x\n# body', /never closed/],
    ['YAML that does not parse', '---\ntitle: [unclosed\n---\nbody', /front matter:/],
    ['front matter that is a list', '---\n- a\n- b\n---\nbody', /mapping/],
    ['a title that is not a string', '---\ntitle: [1, 2]\n---\n# H\n', /"title" has the wrong type/],
    ['depends that names no node', '---\ndepends: ["../x"]\n---\n', /not a node id/],
  ])('reports %s as the node’s problem and still reads the node', (_, text, problem) => {
    const node = parse(text);
    expect(node.problem).toMatch(problem);
    expect(node.id).toBe('auth/login');
    expect(typeof node.title).toBe('string');
  });

  it('ignores ## lines inside fenced code', () => {
    expect(partsOf('## A\n```\n## not a part\n```\n## B\nb').map((p) => p.title)).toEqual(['A', 'B']);
  });
});
