import { join } from 'node:path';
import { isTrellisError, TrellisError } from '../events/index.js';
import { encodeProject, trellisHome } from '../store/trellis-home.js';
import { packageRoot } from '../store/package-root.js';
import { projectToServe, serveFace } from '../store/setup/serve-policy.js';
import { Supervisor } from '../supervisor/supervisor.js';
import { checkShape, type VerbContext } from './shape.js';
import { err, out } from './output.js';
import { UsageError } from './usage-error.js';

const USAGE = 'trellis serve [--port <port>] [--host <address>] [--public] [--fresh]\n       trellis serve ui [--port <dashboard port>]';
export const DEFAULT_PORT = 8787;

const positiveMs = (s: string | undefined, fallback: number) => {
  const n = Number(s);
  return Number.isFinite(n) && n > 0 ? n : fallback;
};

/**
 * `trellis serve`: the supervisor for the project the current folder belongs to, or the demo copy outside
 * one. It parses the flags and prints; what to serve and how it faces the network (a public face needs
 * the admin password) are decided by store/setup/serve-policy.ts. Start-up refusals carry their codes
 * (PORT_IN_USE, BIND_FAILED, ALREADY_SERVING, BOOT_FAILED) to cli/main.ts, which says them and exits 1.
 */
export async function runServe(ctx: VerbContext): Promise<number> {
  checkShape({ args: [], options: ['port', 'host', 'public', 'fresh'], usage: USAGE }, ctx);
  const port = ctx.options.port === undefined ? Number(process.env.TRELLIS_PORT ?? DEFAULT_PORT) : Number(ctx.options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port takes a port number from 0 to 65535, not '${String(ctx.options.port)}'`, USAGE);
  const host = ctx.options.host === undefined ? '127.0.0.1' : String(ctx.options.host);
  const face = serveFace({ port, host, public: ctx.options.public === true }, trellisHome());
  const { root, identity } = await projectToServe(ctx.cwd, { home: trellisHome(), fresh: ctx.options.fresh === true, say: (line) => err(`trellis: ${line}\n`) });
  const pkg = packageRoot().dir;
  const supervisor = new Supervisor({
    root,
    identity,
    port: face.api.port,
    host: face.api.host,
    home: trellisHome(),
    entry: join(pkg, 'dist', 'src', 'http', 'child-main.js'),
    // The child's own code, the forge and eval code among it: all compiled under dist/src. Spec nodes
    // live in the project, never here, so editing them never reloads.
    watch: [join(pkg, 'dist', 'src')],
    env: process.env,
    bootMs: positiveMs(process.env.TRELLIS_CHILD_BOOT_MS, 15_000),
    drainMs: positiveMs(process.env.TRELLIS_DRAIN_MS, 10_000),
    log: (line) => void out(`trellis: ${line}\n`),
  });
  // Signals are caught before start-up ends: a stop asked for meanwhile waits for it, then stops cleanly.
  // The handlers stay for the process's whole life (`on`, not `once`): a record write in flight holds
  // write-file-atomic's signal-exit handler, which re-sends a signal that finds no other listener left,
  // and a `once` listener is removed before it runs — a SIGTERM during a record rewrite (a dead child's
  // replacement) killed serve by the signal, undrained. A second signal changes nothing.
  let started: Promise<void> = Promise.resolve();
  let gateway: { close(): Promise<void> } | undefined;
  let stopping: Promise<void> | undefined;
  const stopped = new Promise<void>((resolve) => {
    const stop = () => {
      supervisor.stopAsked();
      stopping ??= started
        .catch(() => {})
        .then(() => gateway?.close())
        .then(() => supervisor.stop())
        .then(resolve);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  try {
    started = (async () => {
      await supervisor.start();
      if (!face.public) return;
      try {
        const { isWildcard, startGateway, tlsOptions } = await import('./dashboard-command.js');
        // hub.json's certificate, as `trellis dashboard` uses it: the public face speaks HTTPS then.
        const hubTls = (await import('../store/host/hub-config.js')).readHubConfig(trellisHome()).tls;
        const tls = tlsOptions(hubTls?.cert, hubTls?.key);
        const g = await startGateway({ home: trellisHome(), host, port, only: encodeProject(root), ...(tls ? { tls } : {}) });
        gateway = g;
        const page = `p/${encodeProject(root)}/`;
        await out(`trellis: public gateway for ${root} at ${g.urls.map((u) => u + page).join(', ')} (listening on ${new URL(g.url).host}; admin password required; the loopback API stays at ${supervisor.publicUrl})\n`);
        if (g.urls.length === 1 && isWildcard(host)) {
          await err(`trellis: hub.json lists no allowedHosts: clients on other machines are refused (Host check) until the name or address they use for this one is listed there\n`);
        }
      } catch (e) {
        await supervisor.stop();
        throw e;
      }
    })();
    await started;
  } catch (e) {
    // The child's failure to come up, said as the serve's (the supervisor's log keeps the bare reason).
    if (isTrellisError(e) && e.code === 'BOOT_FAILED') throw new TrellisError('BOOT_FAILED', `the server could not start: ${e.message}`, { cause: e });
    throw e;
  }
  await stopped;
  return 0;
}
