import type { Server } from 'node:net';
import { isTrellisError, TrellisError } from '../events/index.js';

/**
 * A public port that could not be bound, as the refusal a person can act on: PORT_IN_USE when another
 * program holds it (EADDRINUSE), else BIND_FAILED; the message names the port and the repair.
 */
export function bindError(port: number, host: string, errno: string | undefined): TrellisError {
  const [why, repair] =
    errno === 'EADDRINUSE'
      ? [`port ${port} is already in use on ${host}`, `stop whatever holds port ${port} (e.g. 'lsof -i :${port}' or 'ss -ltnp'), or choose another with --port <port>`]
      : errno === 'EACCES'
        ? [`port ${port} on ${host} is not permitted for this user`, 'ports under 1024 need privileges: use a port above 1023 with --port <port>']
        : errno === 'EADDRNOTAVAIL'
          ? [`address ${host} is not on this machine, so port ${port} cannot be bound there`, `${host} is not one of this machine's addresses: use --host with one of them, or 127.0.0.1`]
          : [`port ${port} on ${host} cannot be bound (${errno ?? 'unknown error'})`, `check that ${host} is one of this machine's addresses (or use 127.0.0.1), or choose another port with --port <port>`];
  return new TrellisError(errno === 'EADDRINUSE' ? 'PORT_IN_USE' : 'BIND_FAILED', `${why}. Repair: ${repair}.`);
}

/** Whether `err` is bindError's refusal. */
export const isBindError = (err: unknown): err is TrellisError => isTrellisError(err) && (err.code === 'PORT_IN_USE' || err.code === 'BIND_FAILED');

/**
 * The one bind helper of every public face (`trellis serve`, `trellis dashboard`). It listens, and on
 * failure first runs `reap` (kill the already-booted child and wait for it) so no portless process
 * outlives the failure, then rejects with bindError's refusal (PORT_IN_USE, BIND_FAILED).
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
    throw bindError(port, host, (err as NodeJS.ErrnoException).code);
  }
  const addr = server.address();
  return typeof addr === 'object' && addr ? addr.port : port;
}
