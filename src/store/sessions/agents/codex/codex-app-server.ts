import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import type { Server, Socket } from 'node:net';
// node:net on first use: the command hook loads this adapter for every agent event and never opens a socket here.
import { net } from '../../../lazy-builtins.js';
import { join } from 'node:path';
import type WebSocket from 'ws';
import { TrellisError } from '../../../../events/index.js';
import { trellisHome } from '../../../trellis-home.js';

/**
 * A Codex session's own app-server, reached over its unix socket (issue 41): where its files live, a
 * JSON-RPC client over the WebSocket its `unix://` listener speaks, and the watcher's control socket,
 * through which `session answer` (another process) answers an approval by decision name.
 */

/** The folder of session `id`'s app-server path (0700): its socket, the thread the TUI attaches to, the pending approval. */
export const protocolDir = (id: string, env: NodeJS.ProcessEnv = process.env): string => join(trellisHome(env), 'codex', id);

export const protocolFiles = (dir: string) => ({
  /** The app-server's listener (codex makes it a symlink to its own 0600 socket). */
  socket: join(dir, 'app.sock'),
  /** The watcher's control socket (0600): one JSON line in (`{decision}`), one out. */
  control: join(dir, 'control.sock'),
  /** The thread id, once the watcher's thread is up: the pane's TUI attaches to it. */
  ready: join(dir, 'ready'),
  /** Why the app-server path is not taken (an older Codex, an app-server that refused): the pane falls back. */
  refused: join(dir, 'refused'),
  /** The approval waiting on a person: `{method, params}`. */
  pending: join(dir, 'pending.json'),
  /** The app-server's process id (for whoever must know it ended). */
  pid: join(dir, 'app-server.pid'),
  log: join(dir, 'app-server.log'),
  /** The watcher's process id, and what it has read and recorded so far (written at each turn's end, for the bench). */
  watcher: join(dir, 'watch.pid'),
  stats: join(dir, 'watch-stats.json'),
});

/**
 * A confined session's meeting points in its relay folder (a folder the sandbox sees read-only): the
 * watcher's go, ready and refused for the pane inside, and the socket the watcher listens on for the
 * bridge from the app-server inside the sandbox.
 */
export const confinedFiles = (relay: string) => ({ go: join(relay, 'codex-go'), ready: join(relay, 'codex-ready'), refused: join(relay, 'codex-refused'), bridge: join(relay, 'codex.sock') });

/** Makes session `id`'s folder, owner-only. */
export function makeProtocolDir(id: string, env: NodeJS.ProcessEnv = process.env): string {
  const dir = protocolDir(id, env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  return dir;
}

type Handler = (method: string, params: unknown, id?: number | string) => void;

/** A JSON-RPC connection to an app-server: requests with answers, notifications and server requests to `onMessage`. */
export class AppServerClient {
  private next = 1;
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private constructor(
    private readonly ws: WebSocket,
    private readonly onMessage: Handler,
  ) {
    ws.on('message', (data) => this.receive(String(data)));
    ws.on('close', () => {
      for (const w of this.waiting.values()) w.reject(new Error('the app-server closed the connection'));
      this.waiting.clear();
    });
  }

  /** Connects to the `unix://` listener at `socket` (a WebSocket over it: ws's `ws+unix:` form). */
  static async connect(socket: string, onMessage: Handler, timeoutMs = 2_000): Promise<AppServerClient> {
    // Loaded by the watcher alone: the adapter (on every hook's path) never loads ws.
    const { default: WebSocketClass } = await import('ws');
    return new Promise((resolve, reject) => {
      const ws = new WebSocketClass(`ws+unix://${socket}:/`, { handshakeTimeout: timeoutMs });
      ws.once('open', () => resolve(new AppServerClient(ws, onMessage)));
      ws.once('error', (err) => reject(err));
    });
  }

  /** Speaks to the app-server over a stream already open to its listener (a confined session's bridge). */
  static async over(stream: Socket, onMessage: Handler, timeoutMs = 5_000): Promise<AppServerClient> {
    const { default: WebSocketClass } = await import('ws');
    return new Promise((resolve, reject) => {
      const ws = new WebSocketClass('ws://localhost/', { handshakeTimeout: timeoutMs, createConnection: () => stream } as WebSocket.ClientOptions);
      ws.once('open', () => resolve(new AppServerClient(ws, onMessage)));
      ws.once('error', (err) => reject(err));
    });
  }

  /** Resolves when the connection ends, however it ends. */
  closed(): Promise<void> {
    return new Promise((resolve) => (this.ws.readyState === this.ws.CLOSED ? resolve() : this.ws.once('close', () => resolve())));
  }

  request(method: string, params: unknown, timeoutMs = 15_000): Promise<unknown> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`${method}: no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.set(id, {
        resolve: (v) => (clearTimeout(timer), resolve(v)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      this.send({ jsonrpc: '2.0', id, method, params });
    });
  }

  notify(method: string, params?: unknown): void {
    this.send({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }) });
  }

  /** Answers the server's request `id`. */
  respond(id: number | string, result: unknown): void {
    this.send({ jsonrpc: '2.0', id, result });
  }

  close(): void {
    this.ws.close();
  }

  private send(msg: unknown): void {
    this.ws.send(JSON.stringify(msg));
  }

  private receive(text: string): void {
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    if (typeof msg.method === 'string') return this.onMessage(msg.method, msg.params, msg.id as number | string | undefined);
    if (typeof msg.id !== 'number') return;
    const w = this.waiting.get(msg.id);
    if (!w) return;
    this.waiting.delete(msg.id);
    if (msg.error) w.reject(new Error(`app-server: ${JSON.stringify(msg.error)}`));
    else w.resolve(msg.result);
  }
}

/** What the control socket answers. */
export type ControlReply = { readonly ok: true; readonly chose: string; readonly options: readonly string[] } | { readonly ok: false; readonly error: string; readonly code: 'INVALID_INPUT' | 'SESSION_REFUSED' };

/** Listens on `path` (0600) for one-line decisions; `decide` answers each. */
export function serveControl(path: string, decide: (decision: string) => ControlReply): Promise<Server> {
  rmSync(path, { force: true });
  const server = net().createServer((conn) => {
    let buf = '';
    conn.setEncoding('utf8');
    conn.on('data', (chunk) => {
      buf += chunk;
      const nl = buf.indexOf('\n');
      if (nl < 0) return;
      let reply: ControlReply;
      try {
        const { decision } = JSON.parse(buf.slice(0, nl)) as { decision?: unknown };
        reply = typeof decision === 'string' ? decide(decision) : { ok: false, code: 'INVALID_INPUT', error: 'a decision is a name' };
      } catch (err) {
        reply = { ok: false, code: 'INVALID_INPUT', error: (err as Error).message };
      }
      conn.end(`${JSON.stringify(reply)}\n`);
    });
    conn.on('error', () => {});
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      chmodSync(path, 0o600);
      resolve(server);
    });
  });
}

/** Sends a decision by name to session `id`'s watcher: what it chose and every option offered. */
export function sendDecision(id: string, decision: string, env: NodeJS.ProcessEnv = process.env): Promise<{ chose: string; options: readonly string[] }> {
  const path = protocolFiles(protocolDir(id, env)).control;
  return new Promise((resolve, reject) => {
    const conn = net().createConnection(path);
    let buf = '';
    const timer = setTimeout(() => (conn.destroy(), reject(new TrellisError('SESSION_REFUSED', `session ${id}'s Codex app-server client did not answer within 5 s`))), 5_000);
    conn.setEncoding('utf8');
    conn.on('connect', () => conn.write(`${JSON.stringify({ decision })}\n`));
    conn.on('data', (c) => (buf += c));
    conn.on('error', (err) => (clearTimeout(timer), reject(new TrellisError('SESSION_REFUSED', `session ${id}'s Codex app-server client is not there: ${err.message}`))));
    conn.on('end', () => {
      clearTimeout(timer);
      try {
        const r = JSON.parse(buf) as ControlReply;
        if (r.ok) resolve({ chose: r.chose, options: r.options });
        else reject(new TrellisError(r.code, r.error));
      } catch {
        reject(new TrellisError('SESSION_REFUSED', `session ${id}'s Codex app-server client gave no answer`));
      }
    });
  });
}

/** The approval session `id`'s watcher holds for a person, or null. */
export function pendingApproval(id: string, env: NodeJS.ProcessEnv = process.env): { method: string; params: unknown } | null {
  try {
    return JSON.parse(readFileSync(protocolFiles(protocolDir(id, env)).pending, 'utf8')) as { method: string; params: unknown };
  } catch {
    return null;
  }
}

/** Whether session `id` is on the app-server path now: its watcher's control socket is there. */
export const onAppServer = (id: string, env: NodeJS.ProcessEnv = process.env): boolean => existsSync(protocolFiles(protocolDir(id, env)).control);
