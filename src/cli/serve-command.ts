import { existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { TrellisError } from '../events/index.js';
import { BindError } from '../http/bind.js';
import { CONFIG_FILE } from '../store/project/config.js';
import { createDemoProject } from '../store/setup/demo.js';
import { encodeProject, isLoopback, trellisHome, type EndpointIdentity } from '../store/host/endpoint-record.js';
import { packageRoot } from '../store/package-root.js';
import type { Project } from '../store/compose/open-project.js';
import { openProject } from './open-project.js';
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
 * `trellis serve`: the supervisor for the project the current folder belongs to. Outside a Trellis
 * project (no git repository, or one without trellis.json) it serves the demo project: one copy under
 * `$TRELLIS_HOME/demo/leaf-and-kettle`, made on the first run and reused after, so what was done in it
 * stays; `--fresh` sets the old copy aside (renamed, never deleted) and makes a new one.
 */
export async function runServe(ctx: VerbContext): Promise<number> {
  checkShape({ args: [], options: ['port', 'host', 'public', 'fresh'], usage: USAGE }, ctx);
  const port = ctx.options.port === undefined ? Number(process.env.TRELLIS_PORT ?? DEFAULT_PORT) : Number(ctx.options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port takes a port number from 0 to 65535, not '${String(ctx.options.port)}'`, USAGE);
  const host = ctx.options.host === undefined ? '127.0.0.1' : String(ctx.options.host);
  // A non-loopback bind is a public face (DESIGN §10): the raw API, terminals included, never listens
  // there; a gateway does, gated by the admin password exactly as with --public.
  const isPublic = ctx.options.public === true || !isLoopback(host);
  // A public face without a password would make everyone who reaches it admin: refused before anything starts.
  if (isPublic && !(await import('../store/host/hub-config.js')).readHubConfig(trellisHome()).adminPassword) {
    const flag = ctx.options.public === true ? '--public' : `--host ${host}`;
    const why = ctx.options.public === true ? '' : ` (${host} is not a loopback address: anyone who can reach it would run this project's terminals)`;
    throw new TrellisError('INVALID_INPUT', `serve ${flag} refuses to start without an admin password${why}. Repair: run 'trellis dashboard password' first${ctx.options.public === true ? '' : ', or serve on --host 127.0.0.1'}`);
  }

  const project = (await trellisProject(ctx.cwd)) ?? (await demoProject(ctx.options.fresh === true));
  const root = project.root!;
  const pkg = packageRoot().dir;
  const supervisor = new Supervisor({
    root,
    identity: identityOf(project),
    // With --public the raw proxy moves to a free loopback port (still TRELLIS_API_URL); the gateway takes the public one.
    port: isPublic ? 0 : port,
    host: isPublic ? '127.0.0.1' : host,
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
      if (!isPublic) return;
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
    if (e instanceof BindError) throw new TrellisError('INVALID_INPUT', e.message);
    if (e instanceof Error && e.name === 'AlreadyServingError') throw new TrellisError('INVALID_INPUT', e.message);
    if (e instanceof Error && e.name === 'BootError') throw new TrellisError('INVALID_INPUT', `the server could not start: ${e.message}`);
    throw e;
  }
  await stopped;
  return 0;
}

function identityOf(p: Project): EndpointIdentity {
  const dotGit = join(p.root!, '.git');
  const worktree = existsSync(dotGit) && statSync(dotGit).isFile();
  return { toplevel: p.root!, gitCommonDir: p.gitdir, worktree };
}

async function trellisProject(cwd: string): Promise<Project | null> {
  try {
    const p = openProject(cwd);
    return p.root && existsSync(join(p.root, CONFIG_FILE)) ? p : null;
  } catch (e) {
    if (e instanceof TrellisError && e.code === 'NOT_A_REPOSITORY') return null;
    throw e;
  }
}

async function demoProject(fresh: boolean): Promise<Project> {
  const base = join(trellisHome(), 'demo');
  mkdirSync(base, { recursive: true });
  const dir = join(base, 'leaf-and-kettle');
  const kept = existsSync(join(dir, CONFIG_FILE));
  if (kept && !fresh) {
    await err(`trellis: not inside a Trellis project; serving the demo project at ${dir} ('trellis serve --fresh' starts a new copy)\n`);
    return openProject(dir);
  }
  if (existsSync(dir)) {
    // Set aside, not deleted: whatever was done in the old copy stays on disk.
    const aside = `${dir}-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    renameSync(dir, aside);
    await err(`trellis: the previous demo copy is kept at ${aside}\n`);
  }
  await createDemoProject(dir);
  await err(`trellis: not inside a Trellis project; serving a fresh copy of the demo project at ${dir}\n`);
  return openProject(dir);
}
