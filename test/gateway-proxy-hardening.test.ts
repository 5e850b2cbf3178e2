/**
 * The `/p/:id` proxy against issue 19's rows, each with real sockets: a backend planting the gateway's
 * login cookie (4), streams outliving their login (6), one project starving (7), a backend's 413 lost
 * on the way (10).
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import http, { type IncomingMessage } from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { serveProject } from '../src/http/serve.js';
import { encodeProject } from '../src/store/trellis-home.js';
import { hashPassword } from '../src/store/host/hub-config.js';
import { VERIFIED_MS } from '../src/store/host/online-verdict.js';
import { openProject } from '../src/store/compose/open-project.js';
import { publishRecord, raw, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { cleanupRepos, tempDir, tempRepo } from './helpers/repo.js';
import { waitFor } from './helpers/wait.js';

afterAll(cleanupRepos);

const PASSWORD = 'correct horse battery staple';
const closers: (() => Promise<unknown> | void)[] = [];
afterAll(async () => {
  for (const c of closers.reverse()) await c();
});

/** Bytes the stand-in reads of a POST /api/evidence body before answering 413, as the backend's body limit does. */
const LIMIT = 64 * 1024;

/**
 * A backend that misbehaves the ways issue 19 found: it sets the gateway's cookie names (on a plain
 * answer, on a WebSocket 101 and on a refused upgrade), answers 413 part-way through a large body and
 * closes, and streams SSE for as long as it is let. It records the Cookie headers it is sent.
 */
async function hostileBackend(root: string) {
  const instanceId = randomUUID();
  const cookies: (string | undefined)[] = [];
  const probes = { count: 0 };
  const planted = ['trellis_session=planted; Path=/; HttpOnly', '__Host-trellis_session=planted; Path=/; Secure', ' trellis_session =spaced; Path=/', 'backend=1; Path=/'];
  const server = http.createServer((req, res) => {
    cookies.push(req.headers.cookie);
    if (req.url === '/api/instance') probes.count++;
    if (req.url === '/api/instance') return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ instanceId, root }));
    if (req.url === '/plant') return res.writeHead(200, { 'set-cookie': planted, 'content-type': 'text/plain' }).end('planted');
    if (req.url === '/stream') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      return void res.write('event: ready\ndata: {}\n\n');
    }
    if (req.url === '/api/evidence') {
      // Like the backend's body limit: read up to the limit, answer 413 with Connection: close, read no more.
      let n = 0;
      const onData = (d: Buffer) => {
        n += d.length;
        if (n <= LIMIT) return;
        req.off('data', onData);
        req.pause();
        res.writeHead(413, { 'content-type': 'application/json', connection: 'close' }).end(JSON.stringify({ error: { code: 'PAYLOAD_TOO_LARGE' } }));
      };
      req.on('data', onData);
      req.on('end', () => res.writeHead(200).end('small'));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
  const wss = new WebSocketServer({ noServer: true });
  wss.on('headers', (headers) => headers.push('Set-Cookie: trellis_session=planted; Path=/', 'Set-Cookie: backend=ws; Path=/'));
  wss.on('connection', (ws) => ws.on('message', (m) => ws.send(m)));
  server.on('upgrade', (req, socket, head) => {
    cookies.push(req.headers.cookie);
    if (req.url === '/ws-refused') {
      const body = '{"error":"no"}';
      return socket.end(`HTTP/1.1 401 Unauthorized\r\nSet-Cookie: trellis_session=planted; Path=/\r\nSet-Cookie: backend=refused\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/`;
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        for (const c of wss.clients) c.terminate();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return { url, instanceId, cookies, probes };
}

/** A gateway in a fresh home with one hostile backend published as project `root`. */
async function setup(hub?: object) {
  const home = tempDir();
  const root = tempRepo();
  if (hub) writeFileSync(join(home, 'hub.json'), JSON.stringify(hub));
  const backend = await hostileBackend(root);
  await publishRecord(home, root, backend.url, backend.instanceId);
  const gw = await startTestGateway(home);
  closers.push(() => gw.close());
  const p = (path: string) => new URL(`/p/${encodeProject(root)}${path}`, gw.url).href;
  return { home, root, backend, gw, p };
}

const setCookieNames = (headers: { 'set-cookie'?: string[] }) => (headers['set-cookie'] ?? []).map((c) => c.split(';')[0]!.split('=')[0]!.trim());

/** A WebSocket handshake's answer: the 101 and its headers, or the refusal's status, headers and body. */
function handshake(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; ws?: WebSocket; body?: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url.replace(/^http/, 'ws'), { headers });
    ws.on('upgrade', (res) => ws.once('open', () => resolve({ status: 101, headers: res.headers, ws })));
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    ws.on('error', reject);
  });
}

describe('row 4: the gateway’s cookie never crosses /p, either way', () => {
  it('a backend’s Set-Cookie for the gateway’s names is dropped (plain answer, 101, refused upgrade); its own cookies pass', async () => {
    const s = await setup();
    const plain = await raw(s.p('/plant'));
    expect(plain.status).toBe(200);
    expect(setCookieNames(plain.headers)).toEqual(['backend']);

    const up = await handshake(s.p('/ws'));
    expect(up.status).toBe(101);
    expect(setCookieNames(up.headers)).toEqual(['backend']);
    up.ws!.send('still works');
    expect(String((await new Promise((r) => up.ws!.once('message', r))) as Buffer)).toBe('still works');
    up.ws!.close();

    const refused = await handshake(s.p('/ws-refused'));
    expect(refused.status).toBe(401);
    expect(refused.body).toBe('{"error":"no"}');
    expect(setCookieNames(refused.headers)).toEqual(['backend']);
  });

  it('the gateway’s cookies are stripped from requests going upstream, every spelling and every Cookie header', async () => {
    const s = await setup();
    const sent = 'a=1; trellis_session=secret1; __Host-trellis_session=secret2;  trellis_session =secret3; b=2';
    expect((await raw(s.p('/echo'), { headers: { Cookie: sent } })).status).toBe(200);
    expect((await handshake(s.p('/ws'), { Cookie: sent })).status).toBe(101);
    // Two Cookie header lines on one request, sent raw.
    const sock = net.connect(Number(new URL(s.gw.url).port), '127.0.0.1');
    sock.write(`GET ${new URL(s.p('/echo')).pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: trellis_session=secret4\r\nCookie: c=3\r\nConnection: close\r\n\r\n`);
    const answer = await new Promise<string>((resolve) => {
      let t = '';
      sock.on('data', (d) => (t += d)).on('close', () => resolve(t));
    });
    expect(answer).toMatch(/^HTTP\/1.1 200/);
    const seen = s.backend.cookies.filter((c) => c !== undefined).join(' | ');
    expect(seen).toContain('a=1');
    expect(seen).toContain('c=3');
    expect(seen).not.toMatch(/secret/);
  });
});

/** An SSE stream opened through the gateway, resolving once its first event arrived; `closed` when it ends. */
function openStream(url: string, cookie: string): Promise<{ closed: () => boolean; req: http.ClientRequest }> {
  return new Promise((resolve, reject) => {
    let ended = false;
    const req = http.get(url, { agent: false, headers: { accept: 'text/event-stream', cookie } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
      res.on('close', () => (ended = true));
      res.once('data', () => resolve({ closed: () => ended, req }));
    });
    req.on('error', () => (ended = true));
  });
}

describe('row 6: a login’s streams end with it', () => {
  const login = async (s: { gw: TestGateway }, body: object) => {
    const r = await raw(new URL('/auth/login', s.gw.url).href, { method: 'POST', body: JSON.stringify(body) });
    expect(r.status).toBe(200);
    return r.headers['set-cookie']![0]!.split(';')[0]!;
  };

  const cases = [
    {
      name: 'logout (admin login)',
      hub: async () => ({ adminPassword: await hashPassword(PASSWORD) }),
      login: () => ({ password: PASSWORD }),
      end: async (s: Awaited<ReturnType<typeof setup>>, cookie: string) => expect((await raw(new URL('/auth/logout', s.gw.url).href, { method: 'POST', headers: { Cookie: cookie } })).status).toBe(204),
    },
    {
      name: 'logout (a project-password login)',
      hub: async () => ({ adminPassword: await hashPassword(PASSWORD) }),
      gates: true,
      login: (id: string) => ({ password: 'project pw', project: id }),
      end: async (s: Awaited<ReturnType<typeof setup>>, cookie: string) => expect((await raw(new URL('/auth/logout', s.gw.url).href, { method: 'POST', headers: { Cookie: cookie } })).status).toBe(204),
    },
    {
      name: 'a new admin password (no request needed to notice it)',
      hub: async () => ({ adminPassword: await hashPassword(PASSWORD) }),
      login: () => ({ password: PASSWORD }),
      end: async (s: Awaited<ReturnType<typeof setup>>) => writeFileSync(join(s.home, 'hub.json'), JSON.stringify({ adminPassword: await hashPassword('another password') })),
    },
  ];

  for (const c of cases) {
    it(`${c.name} ends the SSE stream and the pane WebSocket it authorized; another login’s stay`, async () => {
      const s = await setup(await c.hub());
      const id = encodeProject(s.root);
      if (c.gates) writeFileSync(join(s.home, 'hub.json'), JSON.stringify({ ...(await c.hub()), gates: { [id]: { password: await hashPassword('project pw') } } }));
      const cookie = await login(s, c.login(id));
      const other = await login(s, c.gates ? { password: 'project pw', project: id } : { password: PASSWORD });
      const sse = await openStream(s.p('/stream'), cookie);
      const ws = await handshake(s.p('/ws'), { Cookie: cookie });
      expect(ws.status).toBe(101);
      const otherSse = await openStream(s.p('/stream'), other);
      let wsClosed = false;
      ws.ws!.on('close', () => (wsClosed = true));
      await c.end(s, cookie);
      await waitFor(() => sse.closed() && wsClosed, 'the stream and the WebSocket to end', 10_000);
      // A new password ends every login; a logout only its own.
      if (c.name.startsWith('logout')) expect(otherSse.closed()).toBe(false);
      otherSse.req.destroy();
    });
  }
});

describe('row 7: one project does not starve through the gateway', () => {
  let gw: TestGateway;
  let idA: string;
  let idB: string;
  beforeAll(async () => {
    const home = tempDir();
    gw = await startTestGateway(home);
    closers.push(() => gw.close());
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const root = tempRepo();
      writeFileSync(join(root, 'trellis.json'), '{}\n');
      const served = await serveProject(openProject(root), { port: 0 });
      closers.push(() => served.close());
      await publishRecord(home, root, served.url, served.instanceId);
      ids.push(encodeProject(root));
    }
    [idA, idB] = ids as [string, string];
  }, 60_000);

  const graph = (id: string) =>
    new Promise<number>((resolve, reject) => {
      const req = http.get(new URL(`/p/${id}/api/graph`, gw.url), { agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.setTimeout(10_000, () => req.destroy(new Error(`GET /p/${id}/api/graph did not answer`)));
      req.on('error', reject);
    });

  it('1,000 SSE clients on /p/A/api/graph/stream are all served while /p/A/api/graph and /p/B/api/graph answer', async () => {
    const clients: http.ClientRequest[] = [];
    let ready = 0;
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${ready} of 1000 SSE clients got their first event`)), 30_000);
        for (let i = 0; i < 1000; i++) {
          const req = http.get(new URL(`/p/${idA}/api/graph/stream`, gw.url), { agent: false, headers: { accept: 'text/event-stream' } }, (res) => {
            let seen = '';
            const onData = (d: Buffer) => {
              seen += d;
              if (!seen.includes('event: ready')) return;
              res.off('data', onData);
              res.resume();
              if (++ready === 1000) {
                clearTimeout(timer);
                resolve();
              }
            };
            res.on('data', onData);
          });
          req.on('error', () => {});
          clients.push(req);
        }
      });
      expect(await graph(idA)).toBe(200);
      expect(await graph(idB)).toBe(200);
    } finally {
      for (const c of clients) c.destroy();
    }
  }, 60_000);

  it('a burst of 1,000 requests to a project not yet verified shares one instance probe (none is told it is offline)', async () => {
    const s = await setup();
    const t0 = Date.now();
    const statuses = await Promise.all(
      Array.from(
        { length: 1000 },
        () =>
          new Promise<number>((resolve) => {
            const req = http.get(s.p('/echo'), { agent: false }, (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode ?? 0));
            });
            req.on('error', () => resolve(0));
          }),
      ),
    );
    expect(statuses.filter((x) => x !== 200)).toEqual([]);
    // One probe, and one more per VERIFIED_MS the burst outlasted (a verdict is trusted that long).
    expect(s.backend.probes.count).toBeLessThanOrEqual(1 + Math.floor((Date.now() - t0) / VERIFIED_MS));
  }, 30_000);

  it('300 slow request bodies through /p/A hold nothing /p/A’s other requests need', async () => {
    const port = Number(new URL(gw.url).port);
    const slow: net.Socket[] = [];
    try {
      for (let i = 0; i < 300; i++) {
        const s = net.connect(port, '127.0.0.1');
        // A body announced at 1,000 bytes, of which one ever arrives.
        s.write(`POST /p/${idA}/api/issues HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`);
        s.on('error', () => {});
        slow.push(s);
      }
      expect(await graph(idA)).toBe(200);
      expect(await graph(idB)).toBe(200);
    } finally {
      for (const s of slow) s.destroy();
    }
  }, 30_000);
});

describe('row 10: a backend’s 413 reaches the client as a 413', () => {
  /** POSTs `size` bytes; the status, or the error the client saw instead of one. */
  const post = (url: string, size: number) =>
    new Promise<number | string>((resolve) => {
      const req = http.request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': size } }, (res: IncomingMessage) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', (e) => resolve(`response error ${e.message}`));
      });
      req.on('error', (e) => resolve(`request error ${(e as NodeJS.ErrnoException).code ?? e.message}`));
      req.end(Buffer.alloc(size, 'x'));
    });

  it('40 bodies of 1 MB to a backend that answers 413 at 64 KB and closes: every one is a 413, never a 502 or a reset', async () => {
    const s = await setup();
    const statuses: (number | string)[] = [];
    for (let i = 0; i < 40; i++) statuses.push(await post(s.p('/api/evidence'), 1 << 20));
    expect(statuses).toEqual(statuses.map(() => 413));
    // A small body under the limit still goes through whole.
    expect(await post(s.p('/api/evidence'), 1000)).toBe(200);
  }, 60_000);
});
