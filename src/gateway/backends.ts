/**
 * The backends the gateway proxies to: one Backend per URL with its pool of kept-alive connections,
 * made once and kept in the gateway's table (Backends), and which of a serve's backends (its child, or
 * its face) a record's requests go to.
 */
import type { Scope } from '../http/route-table.js';
import net from 'node:net';
import { Client, Pool, type buildConnector, type Dispatcher } from 'undici';
import type { EndpointRecord } from '../store/host/endpoint-record.js';

/** A write to a backend that reset the connection: the answer it sent before the reset may still be unread. */
const RESET = new Set(['EPIPE', 'ECONNRESET']);

/**
 * A connection to a backend whose failed writes do not tear it down. A backend may answer early (a 413
 * at its body limit) and close with the rest of the body unread, which resets the connection: the next
 * body write fails, and Node would close the socket on that failure with the answer still unread in the
 * kernel. Here such a write is dropped instead (the body has nowhere to go), and the socket ends on the
 * read side: with the answer parsed, or with the reset reported as the error it is.
 */
function forgivingConnector(opts: buildConnector.Options, callback: buildConnector.Callback): void {
  const socket = net.createConnection({ host: opts.hostname.replace(/^\[|\]$/g, ''), port: Number(opts.port), noDelay: true });
  type Cb = (err?: Error | null) => void;
  const forgive = (cb: Cb) => (err?: Error | null) => cb(err && RESET.has((err as NodeJS.ErrnoException).code ?? '') ? null : err);
  const write = socket._write.bind(socket);
  const writev = socket._writev?.bind(socket);
  socket._write = (chunk: unknown, encoding: BufferEncoding, cb: Cb) => write(chunk, encoding, forgive(cb));
  if (writev) socket._writev = (chunks: { chunk: unknown; encoding: BufferEncoding }[], cb: Cb) => writev(chunks, forgive(cb));
  const failed = (err: Error) => callback(err, null);
  socket.once('error', failed).once('connect', () => {
    socket.off('error', failed);
    callback(null, socket);
  });
}

/** How the gateway talks to a backend: one request per connection at a time, no timeouts of its own. */
const UPSTREAM_OPTIONS = { pipelining: 1, headersTimeout: 0, bodyTimeout: 0, connect: forgivingConnector } as const;

/**
 * Everything about one backend that does not change between requests, computed once: where to connect,
 * the Host and Origin it is sent, and its pool of kept-alive connections.
 */
export class Backend {
  readonly hostname: string;
  readonly port: number;
  /** `127.0.0.1:4711`: the Host every forwarded request carries. */
  readonly host: string;
  /** The backend's own origin: what an allowed browser Origin is rewritten to. */
  readonly origin: string;
  /**
   * Kept-alive connections, never waited for: no cap, so a slow request body or a response that streams
   * (SSE) holds only its own connection. undici's dispatcher, not http.request: a proxied exchange costs
   * about half the CPU (bench `gateway-proxy`). No timeouts of its own: a build may take minutes and a
   * stream hours; the backend's reaper owns abandoned sockets.
   */
  readonly pool: Pool;

  constructor(readonly url: string) {
    const u = new URL(url);
    this.hostname = u.hostname.replace(/^\[|\]$/g, '');
    this.port = Number(u.port || 80);
    this.host = u.host;
    this.origin = `http://${u.host}`;
    this.pool = new Pool(u.origin, { ...UPSTREAM_OPTIONS, connections: null });
  }

  /**
   * A connection of its own for one exchange (closed once it is over): a resend must not land on a
   * kept-alive connection that the failure it follows has doomed as well (a serve's face closes the
   * connections it had paired with a child that died).
   */
  oneShot(): Dispatcher {
    return new Client(this.origin, UPSTREAM_OPTIONS);
  }
}

/** How many backends the table keeps; a backend that moved is dropped with its pool once it grows past. */
const MAX_BACKENDS = 256;

/**
 * The backends one gateway proxies to, made once per URL and kept (its state holds the one table), and
 * which of a serve's backends (its child, or its face) a record's requests go to.
 */
export class Backends {
  /** Backends by URL. */
  private readonly byUrl = new Map<string, Backend>();
  /** Each serve's face → the child the gateway last sent its requests to. */
  private readonly childOfFace = new Map<string, string>();

  /** The Backend at a URL, made once. */
  private at(url: string): Backend {
    let b = this.byUrl.get(url);
    if (!b) {
      if (this.byUrl.size >= MAX_BACKENDS) {
        const [oldest] = this.byUrl;
        void oldest![1].pool.destroy();
        this.byUrl.delete(oldest![0]);
      }
      b = new Backend(url);
      this.byUrl.set(url, b);
    }
    return b;
  }

  /**
   * Where a record's requests go: its serving child directly when the record names one (one hop fewer
   * than the serve's raw proxy), else the face; the serve's face is the fallback either way. A child
   * replaced by a hot swap has its pool closed gracefully: what is in flight finishes, nothing new goes
   * there, so the old child's drain is not held up by the gateway's idle connections.
   */
  of(record: EndpointRecord): { backend: Backend; fallback: Backend } {
    const face = this.at(record.url);
    const before = this.childOfFace.get(record.url);
    if (before !== undefined && before !== record.child) {
      this.childOfFace.delete(record.url);
      const retired = this.byUrl.get(before);
      this.byUrl.delete(before);
      void retired?.pool.close();
    }
    if (record.child === undefined) return { backend: face, fallback: face };
    this.childOfFace.set(record.url, record.child);
    return { backend: this.at(record.child), fallback: face };
  }

  /** The Backend of a record's face: the serve's own raw proxy. */
  faceOf(record: EndpointRecord): Backend {
    return this.at(record.url);
  }

  /** Every pool's connections ended (the gateway closed). */
  close(): void {
    for (const b of this.byUrl.values()) void b.pool.destroy();
    this.byUrl.clear();
    this.childOfFace.clear();
  }
}

/** One proxied exchange: where it goes and what the gateway removes on the way. */
export interface ProxyTarget {
  readonly backend: Backend;
  /**
   * Where a request `backend` failed goes instead (see mayResend), on a connection of its own: the
   * serve's face, which holds it until a child serves.
   */
  readonly fallback?: Backend;
  /** The upstream path, the `/p/<id>` prefix stripped. */
  readonly path: string;
  /** `/p/<id>`: sent as X-Forwarded-Prefix. */
  readonly prefix: string;
  readonly ownCookies: readonly string[];
  /** Who the door let in (door-author.ts): stamped on the request, over whatever the client claimed. */
  readonly author: string;
  /** The scope the door judged the caller to hold (door-scope.ts heldScope): stamped beside the author. */
  readonly scope: Scope;
}
