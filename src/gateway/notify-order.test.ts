import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ProjectList } from '../projections/project-row.js';
import type { Delivered } from '../store/host/notify-deliver.js';
import { Notifier, type NotifierSource } from './notify-hub.js';

/** Polls `check` until it holds (a deadline, never a sleep). */
async function until<T>(what: string, check: () => T | undefined | false, ms = 5_000): Promise<T> {
  for (const deadline = Date.now() + ms; ; ) {
    const v = check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const list = (sessions: string[]): ProjectList =>
  ({
    projects: [
      {
        id: 'p',
        name: 'P',
        online: true,
        inbox: sessions.map((s) => ({ session: s, title: `Session ${s}`, state: 'awaiting', reason: 'permission', waitsFor: 'permission', since: '2026-11-27T14:00:00.000Z' })),
      },
    ],
  }) as unknown as ProjectList;

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const f of cleanup.splice(0)) f();
});

describe("the notifier: one wait's options read holds only that wait", () => {
  it("a wait whose dialog is slow to read goes out after another session's wait, and its withdraw after it", async () => {
    // The backend: session a's dialog answers only when released (an agent still drawing it), b's at once.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const reads: string[] = [];
    const backend = http.createServer((req, res) => {
      reads.push(req.url!);
      const json = (v: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(v));
      if (req.url === '/api/sessions/a/dialog') void held.then(() => json({ options: ['Yes', 'No'], pending: false }));
      else if (req.url === '/api/sessions/b/dialog') json({ options: ['Allow once', 'Reject'], pending: false });
      else json({ state: 'running', reason: null, detail: null, answered: null });
    });
    await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`;
    const home = mkdtempSync(join(tmpdir(), 'trellis-notify-order-'));
    let push: ((body: string) => void) | undefined;
    const gw: NotifierSource = {
      opts: { tls: false },
      hubOrError: () => ({ notify: { targets: [], mute: [], debounceMs: 0, turnEnd: false, retry: { attempts: 1, baseMs: 10, timeoutMs: 1000 } } }) as never,
      feed: { subscribe: (fn: (body: string) => void) => ((push = fn), () => undefined) } as never,
      loginAlive: () => true,
      backendUrl: async () => url,
    };
    const notifier = new Notifier(gw, home, () => http.createServer());
    const told: Delivered[] = [];
    const stop = notifier.listen((e) => told.push(e));
    cleanup.push(() => {
      release();
      stop();
      notifier.close();
      backend.close();
      rmSync(home, { recursive: true, force: true });
    });
    await until('the notifier follows the feed', () => push);
    push!(JSON.stringify(list([])));
    await until('its baseline', () => notifier.settled);

    const t0 = performance.now();
    push!(JSON.stringify(list(['a', 'b'])));
    // b goes out while a's options are still being read.
    const b = await until("b's wait", () => told.find((e) => e.session.id === 'b'));
    const bMs = performance.now() - t0;
    expect(b).toMatchObject({ type: 'wait', options: ['Allow once', 'Reject'] });
    expect(reads).toContain('/api/sessions/a/dialog');
    expect(told.filter((e) => e.session.id === 'a')).toEqual([]);
    // a's wait ends before its options came: its withdraw waits for its wait, in order.
    push!(JSON.stringify(list(['b'])));
    await until('the withdraw is queued', () => notifier.statusOf('p/a/awaiting:permission') === undefined);
    expect(told.filter((e) => e.session.id === 'a')).toEqual([]);
    release();
    await until("a's wait and its withdraw", () => told.filter((e) => e.session.id === 'a').length === 2);
    expect(told.filter((e) => e.session.id === 'a').map((e) => [e.type, e.options ?? e.ended])).toEqual([
      ['wait', ['Yes', 'No']],
      ['withdraw', { at: expect.stringMatching(/^\d\d:\d\d$/) }],
    ]);
    // Each event once.
    expect(told.map((e) => `${e.type} ${e.session.id}`)).toEqual(['wait b', 'wait a', 'withdraw a']);
    // b did not wait for a's read (which was held until after b was told).
    expect(bMs).toBeLessThan(performance.now() - t0);
  });
});
