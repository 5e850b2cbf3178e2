/**
 * Answering from the lock screen (issue 43): a session starts waiting on a permission whose dialog is on
 * its pane → the push service (a stand-in on loopback that checks VAPID and decrypts, as a browser's
 * does) receives the wait with its options (the gateway reads them from the pane first); then the
 * answer a notification's action posts (`POST /waits/:wait/answer`) → the agent's next state, as the
 * answer's response proves it (the backend types the keys, sees the screen change and records the
 * state). The agent is a shell drawing the dialog's shape (the path measured is Trellis's own, not an
 * agent's thinking); debounce 0.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHubServer } from '../src/gateway/hub-server.js';
import { bindPublic } from '../src/http/bind.js';
import { createDemoProject } from '../src/store/setup/demo.js';
import { openProject } from '../src/store/compose/open-project.js';
import { defaultRuntime } from '../src/store/sessions/runtime.js';
import { signalSession } from '../src/store/sessions/signal-verb.js';
import { startPushService } from '../test/push/push-service.js';
import { BIN } from './issues.js';
import { report, round, stats } from './lib.js';
import { serveFor } from './notify.js';

const SAMPLES = Number(process.env.BENCH_NOTIFY_SAMPLES ?? 20);

function cert(dir: string): { cert: string; key: string } {
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
}

const poll = async <T>(what: string, check: () => T | undefined | false, ms = 10_000): Promise<T> => {
  for (const deadline = Date.now() + ms; ; ) {
    const v = check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 2));
  }
};

export async function notifyAnswerBench(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), 'trellis-bench-answer-'));
  const dir = join(home, 'p');
  await createDemoProject(dir);
  writeFileSync(join(home, 'projects.json'), JSON.stringify({ version: 1, projects: [{ root: dir, addedAt: new Date().toISOString() }] }));
  writeFileSync(join(home, 'hub.json'), JSON.stringify({ notify: { debounceMs: 0 } }));
  const env = { ...process.env, TRELLIS_HOME: home };
  const tls = cert(home);
  const push = await startPushService(tls);
  const server = await serveFor(dir, env);
  const hub = createHubServer({ home, tls: false, pushAgent: new https.Agent({ ca: tls.cert }) });
  const base = `http://127.0.0.1:${await bindPublic(hub.server, 0, '127.0.0.1')}/`;
  const project = openProject(dir);
  const tmux = (...args: string[]) => spawnSync('tmux', ['-S', join(home, 'tmux.sock'), ...args], { encoding: 'utf8' }).stdout ?? '';
  try {
    // This machine's person (loopback, no password) subscribes a device.
    const sub = await fetch(new URL('/hub/push/subscriptions', base), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(push.subscription('/phone')) });
    if (sub.status !== 201) throw new Error(`subscribing answered ${sub.status}`);
    const spawned = spawnSync(process.execPath, [BIN, 'session', 'spawn', 'Bench the answers', '--harness', 'shell'], { cwd: dir, env, encoding: 'utf8' });
    const id = spawned.stdout.trim();
    if (spawned.status !== 0 || !id) throw new Error(`session spawn failed: ${spawned.stderr}`);
    await poll('the notifier follows the project', () => hub.state.notifier!.settled, 30_000);
    type Payload = { type: string; wait: string; options: string[]; session: { id: string } };
    const toPush: number[] = [];
    const toState: number[] = [];
    const states = new Map<string, number>();
    for (let i = 0; i < SAMPLES; i++) {
      tmux('send-keys', '-t', `=${id}:`, "clear; printf ' Do you want to proceed?\\n \\342\\235\\257 1. Yes\\n   2. No\\n'", 'Enter');
      await poll('the dialog on the pane', () => /❯ 1\. Yes\n\s+2\. No/.test(tmux('capture-pane', '-p', '-t', `=${id}:`)));
      const from = push.received.length;
      const t0 = performance.now();
      await signalSession(project, defaultRuntime(env), id, 'permission', null);
      const got = await poll('the push with its options', () => push.received.slice(from).map((r) => r.payload as Payload).find((p) => p.type === 'wait' && p.options.length > 0));
      toPush.push(performance.now() - t0);
      const t1 = performance.now();
      const res = await fetch(new URL(`/waits/${got.wait}/answer`, base), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ option: 'Yes' }) });
      const body = (await res.json()) as { state?: string; error?: { message: string } };
      if (res.status !== 200) throw new Error(`the answer was refused: ${res.status} ${body.error?.message}`);
      toState.push(performance.now() - t1);
      states.set(body.state!, (states.get(body.state!) ?? 0) + 1);
      await poll('the withdraw', () => push.received.slice(from).some((r) => (r.payload as Payload).type === 'withdraw'));
    }
    const load = loadavg().map((l) => round(l));
    report('notify.wait-to-push-with-options', { ...stats(toPush), target_p95_ms: 1000, load, note: 'signal permission (dialog on the pane) → the push service stand-in receives the wait with its options (debounce 0)' });
    report('notify.answer-to-next-state', {
      ...stats(toState),
      target_p95_ms: 2000,
      next_states: Object.fromEntries(states),
      load,
      note: "POST /waits/:wait/answer {option} (the service worker's) → its response, which carries the agent's next state as recorded after the keys",
    });
    spawnSync(process.execPath, [BIN, 'session', 'close', id], { cwd: dir, env });
  } finally {
    await hub.close();
    await push.close();
    server.kill('SIGINT');
    await new Promise((r) => server.once('exit', r));
    tmux('kill-server');
    rmSync(home, { recursive: true, force: true });
  }
}
