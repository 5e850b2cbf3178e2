import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { waitFor } from '../../../test/helpers/wait.js';
import { DEFAULT_NOTIFY, type NotifyConfig, type NotifyTarget } from './notify-config.js';
import { NotifyDelivery, type Delivered } from './notify-deliver.js';

const event: Delivered = {
  type: 'wait',
  id: 'p/s1/awaiting:permission',
  wait: 'w1',
  project: { id: 'p', name: 'Bakery' },
  session: { id: 's1', title: 'Bake' },
  waitsFor: 'permission',
  path: '/p/p/#/sessions/s1',
  url: 'http://127.0.0.1/p/p/#/sessions/s1',
  since: '',
};

let server: http.Server;
let url: string;
/** Answers 500 to the first `failFirst` requests of each path, then 200. */
const seen = new Map<string, number>();
let failFirst = 2;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    const n = (seen.get(req.url!) ?? 0) + 1;
    seen.set(req.url!, n);
    res.writeHead(n <= failFirst ? 500 : 200).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => void server.close());

const config = (targets: NotifyTarget[], retry: Partial<NotifyConfig['retry']>): NotifyConfig => ({ ...DEFAULT_NOTIFY, targets, retry: { ...DEFAULT_NOTIFY.retry, ...retry } });

describe('notify delivery', () => {
  it('retries a failing webhook with pauses, then delivers once', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const d = new NotifyDelivery();
    const t: NotifyTarget = { type: 'webhook', url: `${url}/retry`, events: ['wait'], answers: true };
    d.send(config([t], { attempts: 5, baseMs: 10 }), event);
    await waitFor(() => d.tally.get(JSON.stringify(t))?.delivered === 1, 'delivered');
    expect(seen.get('/retry')).toBe(3);
    expect(log.mock.calls.map((c) => String(c[0]))).toEqual([expect.stringMatching(/attempt 1 failed \(answered 500\); again in 10 ms/), expect.stringMatching(/attempt 2 failed \(answered 500\); again in 20 ms/)]);
    log.mockRestore();
  });

  it('gives up after its attempts, logged; an event the target does not want is never sent', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const d = new NotifyDelivery();
    const t: NotifyTarget = { type: 'webhook', url: `${url}/giveup`, events: ['wait'], answers: true };
    d.send(config([t], { attempts: 2, baseMs: 10 }), { ...event, type: 'withdraw' });
    d.send(config([t], { attempts: 2, baseMs: 10 }), event);
    await waitFor(() => d.tally.get(JSON.stringify(t))?.failed === 1, 'given up');
    expect(seen.get('/giveup')).toBe(2);
    expect(String(log.mock.calls.at(-1)![0])).toMatch(/gave up on wait p\/s1\/awaiting:permission after 2 attempts: answered 500/);
    log.mockRestore();
  });

  it('a hung command is killed at its timeout; the other target is not held up by it', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    failFirst = 0;
    const d = new NotifyDelivery();
    const hung: NotifyTarget = { type: 'command', command: [process.execPath, '-e', 'setInterval(() => {}, 1000)'], events: ['wait'] };
    const hook: NotifyTarget = { type: 'webhook', url: `${url}/beside`, events: ['wait'], answers: true };
    d.send(config([hung, hook], { attempts: 1, baseMs: 10, timeoutMs: 2000 }), event);
    await waitFor(() => d.tally.get(JSON.stringify(hook))?.delivered === 1, 'the webhook delivered');
    // The command is still running when the webhook has its event.
    expect(d.tally.get(JSON.stringify(hung))).toEqual({ delivered: 0, failed: 0 });
    await waitFor(() => d.tally.get(JSON.stringify(hung))?.failed === 1, 'the command killed', 15_000);
    expect(String(log.mock.calls.at(-1)![0])).toMatch(/killed by SIGKILL \(over 2000 ms\?\)/);
    log.mockRestore();
  }, 20_000);
});
