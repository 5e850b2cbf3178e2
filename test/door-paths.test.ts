import { RegExpRouter } from 'hono/router/reg-exp-router';
import { SmartRouter } from 'hono/router/smart-router';
import { TrieRouter } from 'hono/router/trie-router';
import { afterAll, describe, expect, it } from 'vitest';
import { scopeCovers } from '../src/http/route-judge.js';
import { ROUTE_TABLE, type Row, type Scope } from '../src/http/route-table.js';
import { heldScope, judgeAtDoor } from '../src/gateway/door-scope.js';
import type { Caller } from '../src/gateway/gateway-state.js';
import type { HubConfig } from '../src/store/host/hub-config.js';
import { builtApp, recordingRouter, type Reached } from './helpers/backend-routes.js';
import { cleanupRepos, tempRepo } from './helpers/repo.js';

/**
 * Issue 46, deliverable 2, differential: thousands of generated hostile paths (dot segments plain and
 * %2e-encoded, encoded and doubled slashes, backslashes, letter case, trailing slashes, escapes, the pane
 * socket's mode query) go through the gateway's own decision (judgeAtDoor, as proxy-route.ts calls it) and,
 * where it lets them pass, through the real backend app's own router (its routes, each handler recording
 * which it is). No path may reach a route above the caller's scope. The same corpus judged on the raw path
 * (the gateway before issue 46) is shown to let some through: the corpus can see the hole.
 */

afterAll(() => cleanupRepos());

const ID = 'proj';
const hub = (gate: HubConfig['gates']) => ({ adminPassword: 'x', gates: gate }) as unknown as HubConfig;
const grant = (admin: boolean) => ({ admin, projects: new Set(admin ? [] : [ID]), expires: Infinity });
const CALLERS: Record<string, Caller> = {
  'project login': { hub: hub({ [ID]: { password: 'h' } }), loopback: false, passwordSet: true, sessionId: 's', grant: grant(false), admin: false },
  'open gate, no login': { hub: hub({ [ID]: 'open' }), loopback: false, passwordSet: true, sessionId: undefined, grant: undefined, admin: false },
  'shell gate': { hub: hub({ [ID]: { password: 'h', shell: true } }), loopback: false, passwordSet: true, sessionId: 's', grant: grant(false), admin: false },
  admin: { hub: hub({}), loopback: false, passwordSet: true, sessionId: 's', grant: grant(true), admin: true },
};

/** A small deterministic generator (mulberry32), so a failure names a path that fails again. */
function rng(seed: number): () => number {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const DOT = ['.', '%2e', '%2E'];
const DOTDOT = ['..', '%2e%2e', '.%2e', '%2E.', '%2e%2E'];
const QUERIES = ['', '', '', '?mode=read', '?mode=write', '?mode=read&mode=write', '?mode=write&mode=read', '?m%6fde=read', '?mode=%72ead', '?mode=read+', '?x=1&mode=read', '?mode', '?mode=READ', '?mode=read%00', '?x=%26mode%3Dread'];

function generate(n: number): string[] {
  const r = rng(46);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const fill = (path: string) =>
    path
      .replace(/:id/g, () => pick(['s1', 'x', 'S1', '1', 'a%2Fb', '%2e%2e']))
      .replace(':n', '1')
      .replace(':action', pick(['resolve', 'retract']))
      .replace(':event', pick(['Stop', 'StopFailure', 'Notification']))
      .replace(':hash', 'ab12')
      .replace('/*', pick(['/checkout/pays/run', '/x%2Fy/run', '/run', '/a/readings', '/index.html', '', '/']));
  const out: string[] = [];
  while (out.length < n) {
    let segs = fill(pick(ROUTE_TABLE).path).split('/').slice(1);
    const muts = 1 + Math.floor(r() * 3);
    for (let m = 0; m < muts; m++) {
      const at = Math.floor(r() * (segs.length + 1));
      switch (Math.floor(r() * 11)) {
        case 0: segs.splice(at, 0, pick(['x', 'api', 'issues', 'p', '%2e%2ex']), pick(DOTDOT)); break;
        case 1: segs.splice(at, 0, pick(DOT)); break;
        case 2: segs.splice(at, 0, ''); break;
        case 3: segs = segs.map((s, i) => (i === at ? s.toUpperCase() : s)); break;
        case 4: segs = segs.map((s, i) => (i === at && s.length ? s.replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)[r() < 0.5 ? 'toUpperCase' : 'toLowerCase']()}`) : s)); break;
        case 5: segs.push(''); break;
        case 6: if (segs.length > 1) segs.splice(at > 0 ? at - 1 : 0, 2, segs.slice(at > 0 ? at - 1 : 0, (at > 0 ? at - 1 : 0) + 2).join(pick(['%2f', '%2F', '\\', '%5c', '%5C', '%252f']))); break;
        case 7: segs.splice(at, 0, pick(['x', 'api', 'sessions']), pick(DOTDOT), pick(DOTDOT)); break;
        case 8: segs = segs.map((s, i) => (i === at ? s.replace(/\./g, '%2e') : s)); break;
        case 9: segs = segs.map((s, i) => (i === at ? `${s};x` : s)); break;
        default: segs.splice(at, 0, pick(['%252e%252e', '..%2f', '%2e%2e%5c', '..;', '.x.', '...']));
      }
    }
    out.push(`/${segs.join('/')}${pick(QUERIES)}${r() < 0.05 ? '#frag' : ''}`);
  }
  return out;
}

const reachedScope = (x: Reached): Scope | null => (x.row ? ('readOnlyWhenModeRead' in x.row && x.readOnly ? 'read' : x.row.scope) : null);

/** The gateway before issue 46, for the corpus's own check: the table matched on the raw path. */
const rawRouter = (() => {
  const router = new SmartRouter<Row>({ routers: [new RegExpRouter(), new TrieRouter()] });
  for (const row of ROUTE_TABLE) router.add(row.method, row.path, row);
  return router;
})();
function rawJudge(method: string, target: string): Scope | null {
  const path = target.replace(/[?#].*$/, '');
  let top: Row | null = null;
  for (const [row] of rawRouter.match(method === 'HEAD' ? 'GET' : method, path)[0] as unknown as [Row][]) if (!top || scopeCovers(row.scope, top.scope)) top = row;
  if (!top) return null;
  return 'readOnlyWhenModeRead' in top && new URLSearchParams(target.split('?')[1] ?? '').get('mode') === 'read' ? 'read' : top.scope;
}

describe('the path the gateway judges is the path the backend routes', () => {
  const corpus = generate(12_000);
  const backend = recordingRouter(builtApp(tempRepo()));
  const METHODS = ['POST', 'GET', 'HEAD'] as const;

  it('12,000 hostile paths × POST, GET (the upgrade\'s method) and HEAD × four callers: none reaches a route above its scope', async () => {
    const reachedAt = new Map<string, Reached>();
    const reach = async (method: string, path: string) => {
      const key = `${method} ${path}`;
      let hit = reachedAt.get(key);
      if (!hit) reachedAt.set(key, (hit = await backend.reach(method, path)));
      return hit;
    };
    const counts = { refused400: 0, noRoute: 0, aboveScope: 0, passed: 0 };
    const breaches: string[] = [];
    for (const target of corpus) {
      for (const method of METHODS) {
        for (const [who, caller] of Object.entries(CALLERS)) {
          const v = judgeAtDoor(caller, ID, method, target);
          if (!v.ok) {
            counts[v.code === 'INVALID_INPUT' ? 'refused400' : v.code === 'NOT_FOUND' ? 'noRoute' : 'aboveScope']++;
            continue;
          }
          counts.passed++;
          const hit = await reach(method, v.path);
          const scope = reachedScope(hit);
          if (scope && !scopeCovers(heldScope(caller, ID), scope)) breaches.push(`${who}: ${method} ${target} → ${hit.row!.method} ${hit.row!.path} (${scope})`);
        }
      }
    }
    expect(breaches.slice(0, 10)).toEqual([]);
    // The recording app routed with the router the real app settles on (a SmartRouter picks per route set).
    const [real, recording] = backend.routers();
    expect(recording).toBe(real);
    expect(real).toBe('SmartRouter + RegExpRouter');
    // The corpus exercised every outcome: refused as ambiguous, unrouted, above scope, and let through.
    for (const [k, n] of Object.entries(counts)) expect(n, k).toBeGreaterThan(500);
  }, 60_000);

  it('the same corpus judged on the raw path (no normalization) lets paths through to routes above their scope', async () => {
    const held = heldScope(CALLERS['project login']!, ID);
    let breaches = 0;
    for (const target of corpus.slice(0, 4000)) {
      for (const method of METHODS) {
        const judged = rawJudge(method, target);
        if (!judged || !scopeCovers(held, judged)) continue;
        const scope = reachedScope(await backend.reach(method, target));
        if (scope && !scopeCovers(held, scope)) breaches++;
      }
    }
    expect(breaches).toBeGreaterThan(0);
  }, 60_000);
});
