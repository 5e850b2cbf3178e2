import net, { type Socket } from 'node:net';

/** After one half closed, the other gets this long to flush and close before it is destroyed. */
const END_GRACE_MS = 5_000;

/**
 * The public face of `trellis serve`: a raw TCP proxy whose target can be switched atomically. Each
 * client connection is paired with one upstream connection to the target of the moment; a close of
 * either half (a clean FIN, an error, or a silent drop reaped by the child) tears down both. There is no
 * idle timeout here: the child's reaper owns abandoned sockets.
 */
export class SwitchableProxy {
  readonly server: net.Server;
  private target: number | null = null;
  private readonly waiting: Socket[] = [];
  private readonly open = new Set<Socket>();

  constructor() {
    this.server = net.createServer((client) => this.accept(client));
  }

  /** Sends every new connection to `port` from now on; connections already open stay where they are. */
  switchTo(port: number): void {
    this.target = port;
    for (const client of this.waiting.splice(0)) this.pair(client, port);
  }

  /** How many client connections wait for a target now. */
  get holding(): number {
    return this.waiting.length;
  }

  /** Holds new connections (until the next switchTo) while no child can take them. */
  hold(): void {
    this.target = null;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      for (const s of this.open) s.destroy();
      for (const s of this.waiting.splice(0)) s.destroy();
    });
  }

  private accept(client: Socket): void {
    client.setNoDelay(true);
    // A client reset while it waits (for a child, or for its upstream connection) only ends that client.
    client.on('error', () => client.destroy());
    // While no child serves (before the first, or while one is replaced), hold the connection rather than refuse it.
    if (this.target === null) return this.holdClient(client);
    this.pair(client, this.target);
  }

  /** Holds one client connection until the next switchTo (or until it closes). */
  private holdClient(client: Socket): void {
    this.waiting.push(client);
    client.once('close', () => this.waiting.splice(this.waiting.indexOf(client) >>> 0, 1));
  }

  private pair(client: Socket, port: number): void {
    this.open.add(client);
    const upstream = net.connect({ port, host: '127.0.0.1', noDelay: true });
    // Until the upstream connection is made, the client's bytes stay in the client socket (it is not
    // read yet), so a target that refuses (a child killed a moment before the supervisor knows it) costs
    // the client nothing: it is held for the next target, as if it had arrived while none served.
    const refused = (err: NodeJS.ErrnoException) => {
      this.open.delete(client);
      if (err.code !== 'ECONNREFUSED' || client.destroyed) return client.destroy();
      if (this.target !== null && this.target !== port) return this.pair(client, this.target);
      this.holdClient(client);
    };
    upstream.once('error', refused);
    upstream.once('connect', () => {
      upstream.off('error', refused);
      if (client.destroyed) return void (this.open.delete(client), upstream.destroy());
      this.join(client, upstream);
    });
  }

  private join(client: Socket, upstream: Socket): void {
    const destroyBoth = () => {
      client.destroy();
      upstream.destroy();
    };
    // A close on one half ends the other: gracefully, so bytes already read from the closing half
    // (the tail of a response sent with `Connection: close`) still reach the peer, then for good.
    const closeOther = (other: Socket) => () => {
      if (other.destroyed) return;
      other.end();
      setTimeout(() => other.destroy(), END_GRACE_MS).unref();
    };
    client.on('error', destroyBoth).on('close', closeOther(upstream));
    upstream.on('error', destroyBoth).on('close', closeOther(client));
    client.once('close', () => this.open.delete(client));
    client.pipe(upstream);
    upstream.pipe(client);
  }
}
