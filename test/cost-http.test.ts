import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupRepos, ok, tempRepo, trellis } from './helpers/repo.js';
import { serveDir } from './helpers/server.js';

let dir: string;
let api: Awaited<ReturnType<typeof serveDir>>;
beforeAll(async () => {
  dir = tempRepo();
  api = await serveDir(dir);
});
afterAll(async () => {
  await api.close();
  cleanupRepos();
});

const json = async (r: Response) => ({ status: r.status, body: await r.json() });

describe('GET /api/cost and trellis cost: one verb', () => {
  it('answer the same report; bad --by or --since is a 400 / a loud exit naming what is accepted', async () => {
    const cli = JSON.parse(await ok(dir, ['cost', '--by', 'day', '--since', '2026-01-01', '--json'])) as unknown;
    expect(await json(await api.get('/api/cost?by=day&since=2026-01-01'))).toEqual({ status: 200, body: cli });
    expect(cli).toMatchObject({ by: 'day', since: '2026-01-01T00:00:00.000Z', rows: [], total: { responses: 0 } });
    // Beside the rows, whatever by and since: the spend today and this week (UTC, from Monday) and the daily budget.
    const day = new Date().toISOString().slice(0, 10);
    expect(cli).toMatchObject({ spend: { today: { since: `${day}T00:00:00.000Z`, usd: 0, responses: 0 }, week: { usd: 0, responses: 0 }, budgetUsdPerDay: null } });
    expect(await json(await api.get('/api/cost?since=week'))).toMatchObject({ status: 200, body: { since: (cli as { spend: { week: { since: string } } }).spend.week.since } });
    expect(await json(await api.get('/api/cost?since=yesterday-ish'))).toMatchObject({ status: 400, body: { error: { code: 'INVALID_INPUT', message: expect.stringMatching(/7d, 12h/) } } });
    expect(await json(await api.get('/api/cost?by=week'))).toMatchObject({ status: 400, body: { error: { code: 'INVALID_INPUT', message: expect.stringMatching(/session, issue, node, day/) } } });
    const bad = await trellis(dir, ['cost', '--by', 'week']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/session, issue, node, day/);
    expect(await ok(dir, ['cost'])).toMatch(/^no model usage recorded\ntotal +\$0\.00 +0 tokens \(in 0, out 0, cache read 0, cache write 0\), 0 response\(s\)\nspent today \$0\.00, this week \(since Monday, UTC\) \$0\.00\n$/);
  });
});
