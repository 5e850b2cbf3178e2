import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupRepos, git, tempDir } from './helpers/repo.js';
import { demoRepo, serveDir } from './helpers/server.js';

/**
 * The backend answers loopback only, but a web page in the user's browser can still send it requests: a
 * form POSTs text/plain to any origin, and the backend reads JSON whatever the Content-Type. So every
 * write refuses pages of other origins, before anything is read or written.
 */
let dir: string;
let api: Awaited<ReturnType<typeof serveDir>>;
beforeAll(async () => {
  dir = await demoRepo();
  // Should a forged spawn ever get through, its worktree and tmux server stay in this test's own home.
  process.env.TRELLIS_HOME = tempDir();
  api = await serveDir(dir);
});
afterAll(async () => {
  await api.close();
  cleanupRepos();
});

const refs = () => git(dir, 'for-each-ref', 'refs/trellis');
const WRITES: [string, string][] = [
  ['/api/issues', JSON.stringify({ concern: 'forged from a web page', by: 'evil' })],
  ['/api/issues/pwreset30min/reply', JSON.stringify({ body: 'forged' })],
  ['/api/sessions', JSON.stringify({ task: 'forged task', harness: 'shell' })],
  ['/api/evidence', 'forged bytes'],
  ['/api/eval/ops%2Finventory-counts/readings', JSON.stringify({ outcome: 'pass' })],
  ['/api/uploads', 'forged upload'],
  ['/api/sync', JSON.stringify({ remote: 'origin' })],
];

describe('writes from pages of other origins', () => {
  it.each(WRITES)('POST %s with a foreign Origin → 403, nothing written', async (path, body) => {
    const before = refs();
    for (const origin of ['http://evil.example', 'https://127.0.0.1.evil.example', 'null']) {
      const res = await api.get(path, { method: 'POST', headers: { 'content-type': 'text/plain', 'x-filename': 'x.txt', origin }, body });
      expect(res.status, `${origin} → ${path}`).toBe(403);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('FORBIDDEN');
    }
    expect(refs()).toBe(before);
  });

  it('the backend own page and a client with no Origin (CLI, agent, the gateway) may write; another loopback origin may not', async () => {
    const port = new URL(api.url).port;
    // Addressed as 127.0.0.1: a page of localhost (another origin, maybe another process on ::1) is refused.
    const other = await api.get('/api/issues', { method: 'POST', headers: { 'content-type': 'application/json', origin: `http://localhost:${port}` }, body: JSON.stringify({ concern: 'x', by: 'y' }) });
    expect(other.status).toBe(403);
    for (const headers of [{ origin: `http://127.0.0.1:${port}` }, {}] as Record<string, string>[]) {
      const res = await api.get('/api/issues', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ concern: 'from a trusted page', by: 'me' }) });
      expect(res.status, JSON.stringify(headers)).toBe(201);
    }
  });

  it('reads stay open to any page (CORS keeps their answers private to the browser)', async () => {
    expect((await api.get('/api/graph', { headers: { origin: 'http://evil.example' } })).status).toBe(200);
  });
});
