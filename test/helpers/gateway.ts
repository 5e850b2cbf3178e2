import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import { join } from 'node:path';
import { WebSocketServer } from 'ws';
import { createHubServer, type HubServer } from '../../src/gateway/hub-server.js';
import { bindPublic } from '../../src/http/bind.js';
import { writeEndpointRecord, type EndpointRecord } from '../../src/store/host/endpoint-record.js';
import { encodeProject } from '../../src/store/trellis-home.js';
import { tempDir } from './repo.js';

export interface TestGateway {
  readonly hub: HubServer;
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** The hub on a real loopback socket, on a free port. */
export async function startTestGateway(home: string, opts: { tls?: { cert: string; key: string }; only?: string } = {}): Promise<TestGateway> {
  const hub = createHubServer({ home, tls: !!opts.tls, ...(opts.only ? { only: opts.only } : {}) }, opts.tls);
  const port = await bindPublic(hub.server, 0, '127.0.0.1');
  return { hub, port, url: `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}/`, close: () => hub.close() };
}

export interface RawResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** One request with full control of its headers (Host, Origin, Cookie), over http or https; `path`, if given, is sent as the request target exactly (no dot segment resolved). */
export function raw(url: string, init: { method?: string; headers?: Record<string, string>; body?: string; ca?: string; path?: string } = {}): Promise<RawResponse> {
  const u = new URL(url);
  const mod = u.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.request(
      u,
      { method: init.method ?? 'GET', headers: { ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers }, agent: false, ...(init.ca ? { ca: init.ca } : {}), ...(init.path !== undefined ? { path: init.path } : {}) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

export const json = (r: RawResponse): any => JSON.parse(r.body);

/** Publishes an endpoint record for `root` at `url` as instance `instanceId` (what a serve writes). */
export async function publishRecord(home: string, root: string, url: string, instanceId: string, extra: Partial<EndpointRecord> = {}): Promise<EndpointRecord> {
  const record: EndpointRecord = {
    version: 1,
    url,
    pid: process.pid,
    instanceId,
    root,
    identity: { toplevel: root, gitCommonDir: join(root, '.git'), worktree: false },
    startedAt: new Date().toISOString(),
    ...extra,
  };
  await writeEndpointRecord(home, record);
  return record;
}

export interface StandIn {
  readonly url: string;
  readonly instanceId: string;
  /** Every request it got: method, url and headers. */
  readonly seen: { method: string; url: string; headers: IncomingHttpHeaders }[];
  /** TCP connections accepted. */
  connections: number;
  close(): Promise<void>;
}

/**
 * A stand-in backend for `root`: answers GET /api/instance as a serve would (as `instanceId`), records
 * every request and connection, echoes on WebSockets, and answers anything else with what it saw.
 */
export async function standInBackend(root: string, instanceId: string = randomUUID()): Promise<StandIn> {
  const seen: StandIn['seen'] = [];
  const server = http.createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    if (req.url === '/api/instance') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ instanceId, root }));
    }
    if (req.url === '/api/evidence') {
      // Answers as soon as the first request bytes arrive, while the client is still sending.
      req.once('data', () => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('got-first\n');
      });
      let n = 0;
      req.on('data', (d: Buffer) => (n += d.length));
      req.on('end', () => res.end(`done ${n}\n`));
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': 'backend=1' });
      res.end(JSON.stringify({ url: req.url, method: req.method, cookie: req.headers.cookie ?? null, body: Buffer.concat(chunks).toString() }));
    });
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws, req) => {
    seen.push({ method: 'UPGRADE', url: req.url ?? '', headers: req.headers });
    ws.on('message', (m, isBinary) => ws.send(m, { binary: isBinary }));
  });
  const standIn: StandIn = {
    url: '',
    instanceId,
    seen,
    connections: 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of wss.clients) c.terminate();
        wss.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  server.on('connection', () => standIn.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  (standIn as { url: string }).url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  return standIn;
}

/** A throwaway self-signed certificate for localhost and 127.0.0.1. */
export function throwawayCert(): { cert: string; key: string } {
  const dir = tempDir();
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
}

/** Polls `check` until it returns a value (bounded), for conditions with no event to wait on. */
export async function until<T>(check: () => T | undefined | Promise<T | undefined>, what: string, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const began = Date.now();
    const v = await check();
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    // Rest as long as the check took (25 ms to 1 s): a check that runs a process must not take the CPU
    // back to back from what is being waited on (the suite is CPU-bound on 2 cores).
    await new Promise((r) => setTimeout(r, Math.min(1_000, Math.max(25, Date.now() - began))));
  }
}

export const slot = encodeProject;

/** A host catalog holding `roots` (the file `trellis projects add` writes), for a gateway on `home`. */
export function catalogProjects(home: string, roots: readonly string[]): void {
  const addedAt = new Date().toISOString();
  writeFileSync(join(home, 'projects.json'), JSON.stringify({ version: 1, projects: roots.map((root) => ({ root, addedAt })) }));
}

/** One JSON request with full control of headers and of the client's own address (an identity proxy's source); the body parsed when it is JSON. */
export function jsonRequest(base: string, path: string, init: { method?: string; body?: unknown; headers?: Record<string, string>; from?: string } = {}): Promise<{ status: number; body: any; headers: http.IncomingHttpHeaders }> {
  const body = init.body === undefined ? undefined : JSON.stringify(init.body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      new URL(path, base),
      { method: init.method ?? (body ? 'POST' : 'GET'), headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...init.headers }, agent: false, ...(init.from ? { localAddress: init.from } : {}) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {}
          resolve({ status: res.statusCode ?? 0, body: parsed, headers: res.headers });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Logs in at the gateway `url` (the admin password, or a project gate's with `project`); the session cookie to send back. */
export async function loginCookie(url: string, password: string, project?: string): Promise<string> {
  const r = await jsonRequest(url, '/auth/login', { body: { password, ...(project ? { project } : {}) } });
  if (r.status !== 200) throw new Error(`login answered ${r.status}: ${JSON.stringify(r.body)}`);
  return String(r.headers['set-cookie']![0]!.split(';')[0]);
}
