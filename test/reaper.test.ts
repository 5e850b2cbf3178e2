import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import net, { type Socket } from 'node:net';
import { join } from 'node:path';
import tls from 'node:tls';
import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReapedServer } from '../src/http/create-server.js';
import { cleanupRepos, tempDir } from './helpers/repo.js';

const HEADER_MS = 300;
const IDLE_MS = 300;
/** Longer than both deadlines put together, with room. */
const OUTLIVE_MS = 3 * (HEADER_MS + IDLE_MS);

function testApp(): Hono {
  const app = new Hono();
  app.get('/fast', (c) => c.text('fast'));
  app.get('/slow', async (c) => {
    await new Promise((r) => setTimeout(r, OUTLIVE_MS));
    return c.text('slow but whole');
  });
  app.get('/sse', (c) =>
    streamSSE(c, async (stream) => {
      for (let i = 0; !stream.aborted && !stream.closed; i++) {
        await stream.writeSSE({ event: 'tick', data: String(i) });
        await stream.sleep(50);
      }
    }),
  );
  return app;
}

let certs: { key: string; cert: string };
beforeAll(() => {
  const dir = tempDir();
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=localhost', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
  certs = { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
});
afterAll(cleanupRepos);

async function listen(secure: boolean): Promise<{ server: Server; port: number; connect: () => Promise<Socket> }> {
  const server = createReapedServer(testApp().fetch, { headerMs: HEADER_MS, idleMs: IDLE_MS }, secure ? certs : undefined);
  server.on('upgrade', (_req, socket: Socket) => {
    socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
    const beat = setInterval(() => socket.write('.'), 50);
    socket.on('close', () => clearInterval(beat));
    socket.on('error', () => clearInterval(beat));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as net.AddressInfo).port;
  const connect = async (): Promise<Socket> => {
    if (!secure) {
      const s = net.connect(port, '127.0.0.1');
      await once(s, 'connect');
      return s;
    }
    const s = tls.connect({ port, host: '127.0.0.1', rejectUnauthorized: false });
    await once(s, 'secureConnect');
    return s;
  };
  return { server, port, connect };
}

/** Sends one request on `socket` and resolves with the response text once `until` matches it. */
function request(socket: Socket, path: string, until: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (d: Buffer) => {
      text += d.toString('latin1');
      if (until.test(text)) {
        socket.off('data', onData);
        resolve(text);
      }
    };
    socket.on('data', onData);
    socket.once('close', () => reject(new Error(`closed before the answer was whole: ${JSON.stringify(text)}`)));
    socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  });
}

const closedAfter = async (socket: Socket) => {
  const t0 = Date.now();
  await once(socket, 'close');
  return Date.now() - t0;
};

/** Counts stream bytes until `n` chunks matching `re` arrived; rejects if the socket closes first. */
function receives(socket: Socket, re: RegExp, n: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = 0;
    const onData = (d: Buffer) => {
      seen += (d.toString('latin1').match(re) ?? []).length;
      if (seen >= n) {
        socket.off('data', onData);
        resolve();
      }
    };
    socket.on('data', onData);
    socket.once('close', () => reject(new Error(`reaped after ${seen} of ${n}`)));
  });
}

describe.each([
  ['plain HTTP', false],
  ['TLS', true],
])('the connection reaper on %s', (_, secure) => {
  let srv: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    srv = await listen(secure);
  });
  afterAll(() => {
    srv.server.closeAllConnections();
    srv.server.close();
  });

  it('closes a socket that never sends a request at the header deadline', async () => {
    const socket = await srv.connect();
    const ms = await closedAfter(socket);
    expect(ms).toBeGreaterThanOrEqual(HEADER_MS * 0.7);
    expect(ms).toBeLessThan(HEADER_MS * 10);
  });

  it('closes an idle keep-alive socket at the idle deadline, and says so in Keep-Alive', async () => {
    const socket = await srv.connect();
    const answer = await request(socket, '/fast', /\r\n\r\nfast$/);
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect(answer).toMatch(/keep-alive: timeout=1/i);
    const ms = await closedAfter(socket);
    expect(ms).toBeGreaterThanOrEqual(IDLE_MS * 0.7);
  });

  it('lets a request slower than both deadlines complete', async () => {
    const socket = await srv.connect();
    const answer = await request(socket, '/slow', /slow but whole$/);
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    socket.destroy();
  });

  it('never reaps an SSE stream, however long it runs', async () => {
    const socket = await srv.connect();
    socket.write('GET /sse HTTP/1.1\r\nHost: x\r\n\r\n');
    await receives(socket, /event: tick/g, Math.ceil(OUTLIVE_MS / 50));
    expect(socket.destroyed).toBe(false);
    socket.destroy();
  });

  it('never reaps an upgraded (WebSocket) socket', async () => {
    const socket = await srv.connect();
    socket.write('GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n');
    await receives(socket, /\./g, Math.ceil(OUTLIVE_MS / 50));
    expect(socket.destroyed).toBe(false);
    socket.destroy();
  });
});
