import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, tempDir, testEnv } from './helpers/repo.js';
import { packageCopy, startServe, type ServeProcess } from './helpers/serve.js';
import { demoRepo } from './helpers/server.js';
import { testTmux, type TestTmux } from './helpers/tmux.js';
import { waitFor } from './helpers/wait.js';
import { openViewer, type TestViewer } from './helpers/ws-viewer.js';

const HEADER_MS = 300;
const IDLE_MS = 300;

let s: ServeProcess | undefined;
let tmux: TestTmux | undefined;
const viewers: TestViewer[] = [];
afterAll(async () => {
  for (const v of viewers) v.ws.terminate();
  await s?.stop('SIGKILL');
  tmux?.kill();
  cleanupRepos();
});

describe('the pane stream across a reload, and the reaper', () => {
  it('a WebSocket idle past both reaper deadlines stays open; a reload closes it with 1012, the viewer reconnects to the new child, the tmux pane never notices', async () => {
    const dir = await demoRepo();
    const home = tempDir();
    const pkg = packageCopy();
    tmux = testTmux(home, dir);
    await tmux.session('s-reload');
    s = await startServe(pkg, dir, { ...testEnv(dir), TRELLIS_HOME: home, TRELLIS_REAP_HEADER_MS: String(HEADER_MS), TRELLIS_REAP_IDLE_MS: String(IDLE_MS) });
    const url = `${s.url.replace(/^http/, 'ws')}api/sessions/s-reload/socket`;
    const connect = async () => {
      const v = await openViewer(url);
      viewers.push(v);
      await v.message((m) => m.type === 'snapshot', 'the snapshot');
      return v;
    };
    const panePid = tmux.display('s-reload', '#{pane_pid}');
    const first = await connect();

    // Idle for longer than both deadlines together (the duration is what is under test), then used.
    await new Promise((r) => setTimeout(r, 3 * (HEADER_MS + IDLE_MS)));
    const from = first.bytes().length;
    first.input('echo idle-$((3*3))\r');
    await first.until((b) => b.subarray(from).includes('idle-9'), 'the echo after idling');

    const core = join(pkg, 'dist/src/http/routes/core.js');
    writeFileSync(core, `${readFileSync(core, 'utf8')}\n// reload\n`);
    await s.line(/switched to child 2 /);
    expect((await first.closed).code).toBe(1012);

    // The client reconnects through the same public port and lands on the new child, with a fresh snapshot.
    const second = await waitFor(() => connect().catch(() => undefined), 'a reconnect');
    const snapshot = second.messages.find((m) => m.type === 'snapshot')!;
    await second.until((b) => b.length >= (snapshot.bytes as number), 'the snapshot bytes');
    expect(second.bytes().subarray(0, snapshot.bytes as number).toString()).toContain('idle-9');
    const from2 = second.bytes().length;
    second.input('echo again-$((4*4))\r');
    await second.until((b) => b.subarray(from2).includes('again-16'), 'the echo on the new child');
    expect(tmux.display('s-reload', '#{pane_pid}')).toBe(panePid);
    // The old child let go of its control client: only the new child's is attached.
    await waitFor(() => tmux!.run('list-clients', '-t', '=s-reload', '-F', '#{client_pid}').trim().split('\n').length === 1, 'one control client');
    second.ws.close();
  });
});
