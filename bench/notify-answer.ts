/**
 * Answering from the lock screen (issue 43): a session starts waiting on a permission whose dialog is on
 * its pane → the push service (a stand-in on loopback that checks VAPID and decrypts, as a browser's
 * does) receives the wait with its options (the gateway reads them from the pane first); then the
 * answer a notification's action posts (`POST /waits/:wait/answer`) → the agent's next state, as the
 * answer's response proves it (the backend types the keys, sees the screen change and records the
 * state). The agent is a shell drawing the dialog's shape (the path measured is Trellis's own, not an
 * agent's thinking); debounce 0. Where a wait's time goes is reported stage by stage (the signal's own
 * durable write, the backend's announce, the project list, the options read, the push), and the
 * notifier's own path (transition recorded → push) beside the whole (signal called → push).
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
import { defaultRuntime } from '../src/store/sessions/verbs/runtime.js';
import { signalSession } from '../src/store/sessions/verbs/signal-verb.js';
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
  // Kept alive, as the gateway's default agent (Node's global one) is for a real push service: a fresh TLS
  // handshake per push (the bench's agent before) was a cost no hub pays.
  const hub = createHubServer({ home, tls: false, pushAgent: new https.Agent({ ca: tls.cert, keepAlive: true }) });
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
    // Where a wait's time goes: the notifier's hooks, timed (the first list that shows the wait, its options read).
    const notifier = hub.state.notifier! as unknown as { onList(l: unknown): void; readOptions(p: string, s: string): Promise<string[]> };
    const seen = { poke: 0, list: 0, optionsFrom: 0, optionsTo: 0 };
    const feed = hub.state.feed! as unknown as { poke(): void };
    const poke = feed.poke.bind(feed);
    // Only what happens after the sample's signal counts (a change left from the sample before is not it).
    let t0 = 0;
    feed.poke = () => {
      if (t0 && !seen.poke) seen.poke = performance.now();
      poke();
    };
    const onList = notifier.onList.bind(notifier);
    notifier.onList = (l) => {
      if (t0 && !seen.list && JSON.stringify(l).includes('"awaiting"')) seen.list = performance.now();
      onList(l);
    };
    const readOptions = notifier.readOptions.bind(notifier);
    notifier.readOptions = async (p, s) => {
      seen.optionsFrom ||= performance.now();
      const o = await readOptions(p, s);
      seen.optionsTo ||= performance.now();
      return o;
    };
    const stages = { signalWrite: [] as number[], toAnnounce: [] as number[], toList: [] as number[], toOptions: [] as number[], readingOptions: [] as number[], toPushAfterOptions: [] as number[] };
    const toPush: number[] = [];
    const recordedToPush: number[] = [];
    const toState: number[] = [];
    const states = new Map<string, number>();
    for (let i = 0; i < SAMPLES; i++) {
      tmux('send-keys', '-t', `=${id}:`, "clear; printf ' Do you want to proceed?\\n \\342\\235\\257 1. Yes\\n   2. No\\n'", 'Enter');
      await poll('the dialog on the pane', () => /❯ 1\. Yes\n\s+2\. No/.test(tmux('capture-pane', '-p', '-t', `=${id}:`)));
      const from = push.received.length;
      Object.assign(seen, { poke: 0, list: 0, optionsFrom: 0, optionsTo: 0 });
      t0 = performance.now();
      await signalSession(project, defaultRuntime(env), id, 'permission', null);
      const written = performance.now();
      const got = await poll('the push with its options', () => push.received.slice(from).map((r) => r.payload as Payload).find((p) => p.type === 'wait' && p.options.length > 0));
      const t = performance.now();
      toPush.push(t - t0);
      recordedToPush.push(t - written);
      stages.signalWrite.push(written - t0);
      stages.toAnnounce.push(seen.poke - written);
      stages.toList.push(seen.list - seen.poke);
      stages.toOptions.push(seen.optionsFrom - seen.list);
      stages.readingOptions.push(seen.optionsTo - seen.optionsFrom);
      stages.toPushAfterOptions.push(t - seen.optionsTo);
      t0 = 0;
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
    report('notify.recorded-to-push-with-options', {
      ...stats(recordedToPush),
      target_p95_ms: 1000,
      load,
      note: "the wait's transition recorded (the signal's durable write returned) → the push with its options: the notifier's own path, without the hook's write (signalWrite below)",
    });
    report('notify.wait-to-push-stages', {
      ...Object.fromEntries(Object.entries(stages).flatMap(([k, v]) => [[`${k}_median_ms`, stats(v).median_ms], [`${k}_p95_ms`, stats(v).p95_ms]])),
      load,
      note: "signalWrite: the signal's own transition written (the hook's part); toAnnounce: → the backend's change stream announces it to the gateway's feed; toList: → the project list (each project's /api/graph) showing the wait reaches the notifier; toOptions: → its options read starts; readingOptions: the read (GET /dialog); toPushAfterOptions: → the push service has it",
    });
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
