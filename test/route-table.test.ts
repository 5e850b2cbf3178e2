import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PERSON_SCOPES, ROUTE_TABLE, SCOPE_WORDS, rowKey, type Scope } from '../src/http/route-table.js';
import { builtApp, routesOf, unrowed } from './helpers/backend-routes.js';
import { cleanupRepos, ROOT, tempRepo } from './helpers/repo.js';

/**
 * Issue 46, deliverable 1: one route table, deny by default. Every route of the real backend app has a row
 * (its scope beside its handler, registered through http/route-table.ts's `route`); a route added any
 * other way is found here, and the per-scope list in docs/gateway-and-security.md (Security) is the table's.
 */

afterAll(() => cleanupRepos());

describe('the route table', () => {
  const dir = tempRepo();

  it("every route of the app has a row, and every row is a route of the app", () => {
    const app = builtApp(dir);
    expect(unrowed(app)).toEqual([]);
    const registered = new Set(routesOf(app).map(rowKey));
    expect(ROUTE_TABLE.map(rowKey).filter((k) => !registered.has(k))).toEqual([]);
  });

  it('a route registered without a row is found (a planted one)', () => {
    const app = builtApp(dir);
    app.post('/api/sessions/:id/planted', (c) => c.text('runs anything'));
    expect(unrowed(app)).toEqual(['POST /api/sessions/:id/planted']);
  });

  it('route() registers only a row of the table, with its own scope', async () => {
    const { route } = await import('../src/http/route-table.js');
    const { Hono } = await import('hono');
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const loose = route as (...a: any[]) => void;
    expect(() => loose(new Hono(), 'read', 'POST', '/api/planted', () => new Response())).toThrow(/not a row of http\/route-table.ts/);
    expect(() => loose(new Hono(), 'data', 'POST', '/api/sessions', () => new Response())).toThrow(/not a row/);
  });

  it("the docs' Security section (docs/gateway-and-security.md) lists, per scope, what it allows and exactly the table's routes", () => {
    const readme = readFileSync(join(ROOT, 'docs', 'gateway-and-security.md'), 'utf8');
    for (const scope of [...PERSON_SCOPES, 'agent'] as Scope[]) {
      const keys = ROUTE_TABLE.filter((r) => r.scope === scope).map((r) => `\`${rowKey(r)}\``);
      // A row whose write on a forge issue needs more than its own scope is listed again under that scope.
      const forge = ROUTE_TABLE.filter((r) => 'forgeScope' in r && r.forgeScope === scope).map((r) => `\`${rowKey(r)}\``);
      const onForge = forge.length ? ` On a forge issue (a write with this machine's token): ${forge.join(', ')}.` : '';
      expect(readme, scope).toContain(`- **${scope}**: ${SCOPE_WORDS[scope]}. Routes: ${keys.join(', ')}.${onForge}\n`);
    }
  });
});
