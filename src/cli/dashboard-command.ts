import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { TrellisError } from '../events/index.js';
import { bindPublic } from '../http/bind.js';
import { installProcessGuards } from '../http/process-guards.js';
import { createHubServer } from '../gateway/hub-server.js';
import { isLoopback } from '../store/host/endpoint-record.js';
import { trellisHome } from '../store/trellis-home.js';
import { setAdminPassword } from '../store/host/admin-password.js';
import { readHubConfig } from '../store/host/hub-config.js';
import { removeHubRecord, writeHubRecord } from '../store/host/hub-record.js';
import { checkShape, type VerbContext } from './shape.js';
import { err, out } from './output.js';
import { UsageError } from './usage-error.js';
import { unknownAction } from './unknown-action.js';

const USAGE = 'trellis dashboard [--port <port>] [--host <address>] [--tls-cert <file> --tls-key <file>]\n       trellis dashboard password';
export const DASHBOARD_PORT = 8700;

/** `trellis dashboard [password]`. */
export async function runDashboard(action: string | undefined, ctx: VerbContext): Promise<number> {
  if (action === 'password') {
    checkShape({ args: [], options: [], usage: USAGE }, ctx);
    return setPassword();
  }
  if (action !== undefined) throw unknownAction('dashboard', action, { password: 'trellis dashboard password' });
  checkShape({ args: [], options: ['port', 'host', 'tlsCert', 'tls-cert', 'tlsKey', 'tls-key'], usage: USAGE }, ctx);
  const port = ctx.options.port === undefined ? DASHBOARD_PORT : Number(ctx.options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port takes a port number from 0 to 65535, not '${String(ctx.options.port)}'`, USAGE);
  const host = ctx.options.host === undefined ? '127.0.0.1' : String(ctx.options.host);
  const home = trellisHome();
  // The command line's certificate, else the hub's `tls` option ({cert, key} file paths).
  const hubTls = readHubConfig(home).tls;
  const tls = tlsOptions(ctx.options.tlsCert ?? hubTls?.cert, ctx.options.tlsKey ?? hubTls?.key);
  const gateway = await startGateway({ home, host, port, tls });
  const wildcard = isWildcard(host);
  // The addresses a browser can open (never 0.0.0.0, which is where it listens, not a place to go).
  await out(`trellis: dashboard at ${gateway.urls.join(', ')}${wildcard ? ` (listening on ${new URL(gateway.url).host})` : ''}\n`);
  if (wildcard && gateway.urls.length === 1) {
    await err(`trellis: hub.json lists no allowedHosts: clients on other machines are refused (Host check) until the name or address they use for this one is listed there\n`);
  }
  if (isLoopback(host) || wildcard) {
    await writeHubRecord(home, {
      version: 1,
      url: wildcard ? `${tls ? 'https' : 'http'}://127.0.0.1:${gateway.port}/` : gateway.url,
      pid: process.pid,
      instanceId: gateway.instanceId,
      startedAt: new Date().toISOString(),
    });
  }
  await new Promise<void>((resolve) => {
    // `on`, not `once`: a `once` listener is gone before a write-file-atomic signal handler asks whether
    // anyone else listens, and that handler then re-sends the signal (see serve-command.ts).
    let closing: Promise<void> | undefined;
    const stop = () => void (closing ??= gateway.close().then(resolve));
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  removeHubRecord(home, gateway.instanceId);
  return 0;
}

/** Reads the certificate and key named by --tls-cert/--tls-key: both or neither. */
export function tlsOptions(cert: unknown, key: unknown): { cert: Buffer; key: Buffer } | undefined {
  if (cert === undefined && key === undefined) return undefined;
  if (typeof cert !== 'string' || typeof key !== 'string') throw new UsageError('--tls-cert and --tls-key go together', USAGE);
  const read = (f: string, what: string) => {
    try {
      return readFileSync(f);
    } catch (e) {
      throw new TrellisError('INVALID_INPUT', `cannot read the TLS ${what} ${f} (${(e as Error).message})`);
    }
  };
  return { cert: read(cert, 'certificate'), key: read(key, 'key') };
}

/** An address that binds every interface. */
export const isWildcard = (host: string): boolean => host === '0.0.0.0' || host === '::';

/**
 * Starts a gateway (the host dashboard, or `serve --public`'s single-project face) on the shared bind
 * helper. A non-loopback address without an admin password is refused before anything binds.
 */
export async function startGateway(o: { home: string; host: string; port: number; tls?: { cert: Buffer; key: Buffer }; only?: string }) {
  // serve --public runs inside the supervisor, whose guards are already in place.
  if (!o.only) installProcessGuards('gateway');
  const loopbackBind = isLoopback(o.host);
  if (!loopbackBind && !readHubConfig(o.home).adminPassword) {
    throw new TrellisError('INVALID_INPUT', `refusing to listen on ${o.host} without an admin password: anyone who can reach it would be admin. Repair: run 'trellis dashboard password' first, or bind to 127.0.0.1`);
  }
  const extraHosts = loopbackBind || isWildcard(o.host) ? [] : [o.host];
  const hub = createHubServer({ home: o.home, tls: !!o.tls, extraHosts, ...(o.only ? { only: o.only } : {}) }, o.tls);
  // A port that cannot be bound is refused with its code (PORT_IN_USE, BIND_FAILED), naming the port and the repair.
  const port = await bindPublic(hub.server, o.port, o.host);
  const scheme = o.tls ? 'https' : 'http';
  const at = (h: string) => `${scheme}://${h.includes(':') ? `[${h}]` : h}:${port}/`;
  const url = at(o.host);
  // What a browser can open: a wildcard bind is reached at a loopback address here, and elsewhere at the
  // names the Host check lets through (hub.json's allowedHosts).
  const urls = isWildcard(o.host) ? [at(o.host === '::' ? '::1' : '127.0.0.1'), ...(readHubConfig(o.home).allowedHosts ?? []).map(at)] : [url];
  return { url, urls, port, instanceId: hub.state.instanceId, close: hub.close };
}

async function setPassword(): Promise<number> {
  // From a pipe, the first line only: a browser's password field cannot hold a newline, so a second line
  // (`printf 'pw\npw\n' | ...`) stored as part of the password would lock everyone out.
  const password = process.stdin.isTTY ? await promptTwice() : firstLine(await readAll());
  if (password === '') throw new TrellisError('INVALID_INPUT', 'the password is empty; nothing was changed. Type one at the prompt, or pipe it in as the first line of stdin');
  const home = trellisHome();
  // The machine's own user vouches for the change (they can write hub.json anyway): no current password asked.
  await setAdminPassword(home, { password, proof: { kind: 'host-user' } });
  await out(`trellis: admin password set in ${home}/hub.json (stored as an scrypt hash); existing dashboard logins are ended\n`);
  return 0;
}

/** Up to the first line break (`\n` or `\r\n`), without it. */
const firstLine = (text: string): string => /^[^\r\n]*/.exec(text)![0];

async function readAll(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Asks on the terminal without echoing, twice. */
async function promptTwice(): Promise<string> {
  const ask = (q: string) =>
    new Promise<string>((resolve) => {
      let muted = false;
      const sink = new Writable({
        write(chunk, _enc, cb) {
          if (!muted) process.stdout.write(chunk);
          cb();
        },
      });
      const rl = createInterface({ input: process.stdin, output: sink, terminal: true });
      rl.question(q, (a) => {
        rl.close();
        process.stdout.write('\n');
        resolve(a);
      });
      muted = true;
    });
  const a = await ask('New admin password: ');
  const b = await ask('Again: ');
  if (a !== b) throw new TrellisError('INVALID_INPUT', 'the two passwords differ; nothing was changed');
  return a;
}
