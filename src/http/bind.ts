import type { Server } from 'node:net';

/** A public port that could not be bound: the message names the port and the repair. */
export class BindError extends Error {
  override name = 'BindError';
  constructor(
    readonly port: number,
    readonly host: string,
    readonly code: string | undefined,
  ) {
    const why =
      code === 'EADDRINUSE'
        ? `port ${port} is already in use on ${host}`
        : code === 'EACCES'
          ? `port ${port} on ${host} is not permitted for this user`
          : code === 'EADDRNOTAVAIL'
            ? `address ${host} is not on this machine, so port ${port} cannot be bound there`
            : `port ${port} on ${host} cannot be bound (${code ?? 'unknown error'})`;
    super(`${why}. Repair: stop whatever holds port ${port} (e.g. 'lsof -i :${port}' or 'ss -ltnp'), or choose another with --port <port>.`);
  }
}

/**
 * The one bind helper of every public face (`trellis serve`, `trellis dashboard`). It listens, and on
 * failure first runs `reap` (kill the already-booted child and wait for it) so no portless process
 * outlives the failure, then rejects with a BindError.
 */
export async function bindPublic(server: Server, port: number, host: string, reap: () => Promise<void> = async () => {}): Promise<number> {
  try {
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      server.once('error', onError);
      server.listen(port, host, () => {
        server.off('error', onError);
        resolve();
      });
    });
  } catch (err) {
    await reap();
    throw new BindError(port, host, (err as NodeJS.ErrnoException).code);
  }
  const addr = server.address();
  return typeof addr === 'object' && addr ? addr.port : port;
}
