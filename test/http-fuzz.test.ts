import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupRepos } from './helpers/repo.js';
import { demoRepo, serveDir } from './helpers/server.js';

let api: Awaited<ReturnType<typeof serveDir>>;
beforeAll(async () => {
  api = await serveDir(await demoRepo());
});
afterAll(async () => {
  await api.close();
  cleanupRepos();
});

function prng(seed: number) {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const rand = prng(SEED);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

const weird = ['', ' ', '#', '%', '%00', '%2F', '..', '../..', '%2e%2e', 'a'.repeat(300), 'ü', '💥', '\u0000', 'github.com#1', 'srch4nothing', '-1', '0', '1e9', 'null', '[]', '{}', '<script>'];
const values: unknown[] = [null, true, false, 0, -1, 1.5, 1e308, '', 'x', ' ', 'a'.repeat(5000), [], [1], ['x'], [null], {}, { a: 1 }, '\u0000', '💥'];

function body(): string {
  switch (Math.floor(rand() * 6)) {
    case 0:
      return pick(['', '{', '}', '[', 'null', '"str"', '12', '{"concern":', '{{}}', '\u0000', 'tru']);
    case 1:
      return JSON.stringify(pick(values));
    default: {
      const keys = ['concern', 'body', 'nodes', 'store', 'by', 'evidence', 'reading', 'extra', '__proto__', 'constructor'];
      const o: Record<string, unknown> = {};
      for (let i = Math.floor(rand() * 4); i >= 0; i--) o[pick(keys)] = pick(values);
      return JSON.stringify(o);
    }
  }
}

const enc = (s: string) => (rand() < 0.5 ? encodeURIComponent(s) : s.replace(/[\u0000-\u001f #?]/g, (c) => encodeURIComponent(c)));

function request(): { method: string; path: string; body?: string; headers: Record<string, string> } {
  const id = enc(pick(weird));
  const node = enc(pick([...weird, 'catalog/search', 'accounts/sign-in']));
  const routes: [string, string][] = [
    ['POST', '/api/issues'],
    ['POST', `/api/issues/${id}/reply`],
    ['POST', `/api/issues/${id}/remark`],
    ['POST', `/api/issues/${id}/close`],
    ['POST', `/api/issues/${id}/promote`],
    ['POST', `/api/issues/${id}/replies/${enc(pick(weird))}/${pick(['resolve', 'unresolve', 'retract', 'x'])}`],
    ['GET', `/api/issues/${id}`],
    ['GET', `/api/issues/${id}/timeline`],
    ['GET', `/api/specs/${node}/history`],
    ['GET', `/api/specs/${node}/diff/${enc(pick(weird))}`],
    ['GET', `/api/specs/${node}/content`],
    ['GET', `/api/edit?node=${node}&worktree=${enc(pick(weird))}`],
    ['GET', `/api/evidence/${id}`],
    ['POST', '/api/evidence'],
    ['GET', '/api/graph'],
    ['GET', `/api/${id}`],
  ];
  const [method, path] = pick(routes);
  const headers: Record<string, string> = {};
  if (rand() < 0.5) headers['content-type'] = pick(['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1']);
  if (rand() < 0.2) headers['if-none-match'] = pick(['*', '"x"', 'W/"y"', '', '"']);
  if (rand() < 0.2) headers.range = pick(['bytes=0-', 'bytes=-0', 'bytes=5-1', 'bytes=a-b', 'items=0-1', 'bytes=0-1,3-4', 'bytes=99999999999999999999-']);
  return { method, path, headers, ...(method === 'POST' ? { body: body() } : {}) };
}

describe('fuzzing every JSON route', () => {
  it(`hundreds of bad bodies, ids, paths and headers never get a 5xx, and the server stays up (seed ${SEED})`, async () => {
    const failures: string[] = [];
    for (let i = 0; i < 600; i++) {
      const req = request();
      let status: number;
      try {
        const r = await fetch(new URL(req.path, api.url), { method: req.method, headers: req.headers, ...(req.body !== undefined ? { body: req.body } : {}) });
        status = r.status;
        const text = await r.text();
        if (status >= 400 && status !== 416 && status !== 304) JSON.parse(text).error.code;
      } catch (err) {
        failures.push(`${req.method} ${req.path} ${JSON.stringify(req.body)}: ${(err as Error).message}`);
        continue;
      }
      if (status >= 500) failures.push(`${req.method} ${req.path} ${JSON.stringify(req.body)} ${JSON.stringify(req.headers)} → ${status}`);
    }
    expect(failures).toEqual([]);
    expect((await api.get('/health')).status).toBe(200);
  });
});
