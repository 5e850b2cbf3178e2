import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { net } from '../../../lazy-builtins.js';
import { join } from 'node:path';
import type { SessionState } from '../../../../projections/index.js';
import { trellisHome } from '../../../trellis-home.js';

/**
 * Where a session's opencode serves its API: a loopback port and the password of its HTTP basic auth
 * (`OPENCODE_SERVER_PASSWORD`, user `opencode`), both chosen by Trellis at each launch. Kept in a file
 * only this user can read (`$TRELLIS_HOME/opencode/`), which the pane's shell hands to opencode, and the
 * event-stream watcher and the answering verb read: the password never appears on a command line.
 */
export interface OpencodeEndpoint {
  readonly port: number;
  readonly password: string;
}

/** The endpoint file of a session: its id and its worktree's path (ids alone are per project). */
export function endpointFile(state: Pick<SessionState, 'id' | 'worktree'>, env: NodeJS.ProcessEnv = process.env): string {
  const key = createHash('sha256').update(state.worktree).digest('hex').slice(0, 12);
  return join(trellisHome(env), 'opencode', `${state.id}-${key}.json`);
}

/** Writes a fresh endpoint (a new password) for a launch on `port`; returns the file. */
export function writeEndpoint(state: Pick<SessionState, 'id' | 'worktree'>, port: number, env: NodeJS.ProcessEnv = process.env): string {
  const file = endpointFile(state, env);
  mkdirSync(join(file, '..'), { recursive: true, mode: 0o700 });
  const endpoint: OpencodeEndpoint = { port, password: randomBytes(24).toString('hex') };
  writeFileSync(file, `${JSON.stringify(endpoint)}\n`, { mode: 0o600 });
  return file;
}

/** The endpoint of the session's current launch, or null (never launched under this TRELLIS_HOME). */
export function readEndpoint(state: Pick<SessionState, 'id' | 'worktree'>, env: NodeJS.ProcessEnv = process.env): OpencodeEndpoint | null {
  try {
    const raw = JSON.parse(readFileSync(endpointFile(state, env), 'utf8')) as Partial<OpencodeEndpoint>;
    return typeof raw.port === 'number' && typeof raw.password === 'string' ? { port: raw.port, password: raw.password } : null;
  } catch {
    return null;
  }
}

/** A loopback port free right now (the kernel's pick), for opencode's `--port`. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net().createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** How soon an opened event stream says `server.connected` (at once, from a server that is up). */
const FIRST_WORD_MS = 2_000;

const authHeader = (e: OpencodeEndpoint) => `Basic ${Buffer.from(`opencode:${e.password}`).toString('base64')}`;

/**
 * One call to opencode's API with a deadline (opencode can accept a connection in its first instants
 * and never answer it): the JSON answer, or an error naming the status.
 */
export async function opencodeCall(e: OpencodeEndpoint, method: 'GET' | 'POST', path: string, body?: unknown, timeoutMs = 3_000): Promise<unknown> {
  const res = await fetch(`http://127.0.0.1:${e.port}${path}`, {
    method,
    headers: { authorization: authHeader(e), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`opencode answered ${method} ${path} with ${res.status}: ${text.slice(0, 200)}`);
  return text ? (JSON.parse(text) as unknown) : null;
}

/**
 * opencode's event stream (`GET /event`, server-sent events, one JSON object per `data:` line), each
 * event handed to `onEvent` as it comes. Resolves when the stream ends; rejects when it cannot be opened
 * or goes silent: opencode says `server.connected` at once and a heartbeat every few seconds.
 */
export async function streamEvents(e: OpencodeEndpoint, onEvent: (event: { type: string; properties: unknown }) => Promise<void>, silentMs = 30_000): Promise<void> {
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const arm = (ms: number) => {
    clearTimeout(timer);
    timer = setTimeout(() => abort.abort(new Error(`opencode's event stream said nothing for ${ms} ms`)), ms);
  };
  // A server still starting can take the connection and never answer it: the first word comes fast or never.
  arm(FIRST_WORD_MS);
  try {
    const res = await fetch(`http://127.0.0.1:${e.port}/event`, { headers: { authorization: authHeader(e), accept: 'text/event-stream' }, signal: abort.signal });
    if (!res.ok || !res.body) throw new Error(`opencode's event stream answered ${res.status}`);
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      arm(silentMs);
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = block
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trimStart())
          .join('\n');
        if (!data) continue;
        const event = JSON.parse(data) as { type?: unknown; properties?: unknown };
        if (typeof event.type === 'string') await onEvent({ type: event.type, properties: event.properties ?? {} });
      }
    }
  } finally {
    clearTimeout(timer);
  }
}
