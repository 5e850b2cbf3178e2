/**
 * The login rate limit under a parallel burst: 1,000 wrong passwords sent at once from one address to a
 * real gateway socket. Reported: how many were evaluated (an scrypt check each, answered 401) and how
 * many were refused before any check (429 with Retry-After), and how long the whole burst took. Then one
 * right password from the same address in another scope (a project gate): it must still be evaluated.
 */
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { createHubServer } from '../src/gateway/hub-server.js';
import { bindPublic } from '../src/http/bind.js';
import { hashPassword } from '../src/store/host/hub-config.js';
import { report, round, tempRepo } from './lib.js';

const BURST = 1_000;

function post(port: number, body: unknown, agent: http.Agent): Promise<{ status: number; retryAfter: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/auth/login', method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

export async function loginBench(): Promise<void> {
  const { dir: home, cleanup } = tempRepo();
  writeFileSync(join(home, 'hub.json'), JSON.stringify({ adminPassword: await hashPassword('the right password'), gates: { 'gated-000000000000': { password: await hashPassword('project password') } } }));
  const hub = createHubServer({ home, tls: false });
  const port = await bindPublic(hub.server, 0, '127.0.0.1');
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  try {
    const t0 = performance.now();
    const answers = await Promise.all(Array.from({ length: BURST }, (_, i) => post(port, { password: `wrong ${i}` }, agent)));
    const ms = performance.now() - t0;
    const evaluated = answers.filter((a) => a.status === 401).length;
    const refused = answers.filter((a) => a.status === 429 && Number(a.retryAfter) > 0).length;
    const other = BURST - evaluated - refused;
    const project = await post(port, { password: 'project password', project: 'gated-000000000000' }, agent);
    const admin = await post(port, { password: 'the right password' }, agent);
    report('login.parallel_wrong_passwords', {
      sent: BURST,
      evaluated,
      refused_429: refused,
      other,
      target_evaluated_max: 5,
      burst_ms: round(ms),
      project_login_after_burst: project.status,
      admin_login_after_burst: admin.status,
      cores: cpus().length,
      load_avg_1m: round(loadavg()[0]!),
    });
  } finally {
    agent.destroy();
    await hub.close();
    cleanup();
  }
}
