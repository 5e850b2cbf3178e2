import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SwitchableProxy } from '../src/supervisor/proxy.js';
import { waitFor } from './helpers/wait.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

const listen = (server: net.Server): Promise<number> =>
  new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));

/** An HTTP server answering with its own name. */
async function backend(name: string): Promise<number> {
  const server = http.createServer((_req, res) => res.end(name));
  const port = await listen(server);
  closers.push(() => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  return port;
}

/** A loopback port nothing listens on (a child that has just died). */
async function deadPort(): Promise<number> {
  const server = net.createServer();
  const port = await listen(server);
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function proxy(): Promise<{ proxy: SwitchableProxy; port: number }> {
  const p = new SwitchableProxy();
  const port = await listen(p.server);
  closers.push(() => p.close());
  return { proxy: p, port };
}

const get = (port: number): Promise<string> =>
  new Promise((resolve, reject) => {
    http
      .get({ port, host: '127.0.0.1', path: '/', agent: false }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d)).on('end', () => resolve(body));
      })
      .on('error', reject);
  });

describe('the serve’s face (SwitchableProxy)', () => {
  it('a connection its target refuses (a child killed a moment ago) is held, request and all, and answered by the next target', async () => {
    const { proxy: face, port } = await proxy();
    face.switchTo(await deadPort());
    const answer = get(port);
    await waitFor(() => face.holding === 1, 'the refused connection to be held');
    face.switchTo(await backend('replacement'));
    expect(await answer).toBe('replacement');
    expect(face.holding).toBe(0);
  });

  it('a held client that leaves is let go, and the next target serves the next client', async () => {
    const { proxy: face, port } = await proxy();
    face.switchTo(await deadPort());
    const leaving = net.connect({ port, host: '127.0.0.1' });
    await waitFor(() => face.holding === 1, 'the refused connection to be held');
    leaving.destroy();
    await waitFor(() => face.holding === 0, 'the closed client to be let go');
    face.switchTo(await backend('live'));
    expect(await get(port)).toBe('live');
  });
});
