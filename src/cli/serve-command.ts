import { mkdtempSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { TrellisError } from '../events/index.js';
import { serveProject } from '../http/serve.js';
import { CONFIG_FILE } from '../store/config.js';
import { createDemoProject } from '../store/demo.js';
import { openProject, type Project } from '../store/project.js';
import { existsSync } from 'node:fs';
import { checkShape, type VerbContext } from './issue-commands.js';
import { err, out } from './output.js';
import { UsageError } from './usage-error.js';

const USAGE = 'trellis serve [--port <port>] [--host <address>]';
export const DEFAULT_PORT = 8787;

/** `~/.trellis`, or TRELLIS_HOME. */
export const trellisHome = (env: NodeJS.ProcessEnv = process.env): string => env.TRELLIS_HOME || join(homedir(), '.trellis');

/**
 * `trellis serve`: serves the project the current folder belongs to. Outside a Trellis project (no git
 * repository, or one without trellis.json) it serves a fresh copy of the bundled demo project, made
 * under `$TRELLIS_HOME/demo/`.
 */
export async function runServe(ctx: VerbContext): Promise<number> {
  checkShape({ args: [], options: ['port', 'host'], usage: USAGE, run: async () => 0 }, ctx);
  const port = ctx.options.port === undefined ? Number(process.env.TRELLIS_PORT ?? DEFAULT_PORT) : Number(ctx.options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port takes a port number from 0 to 65535, not '${String(ctx.options.port)}'`, USAGE);
  const host = ctx.options.host === undefined ? '127.0.0.1' : String(ctx.options.host);

  const project = (await trellisProject(ctx.cwd)) ?? (await demoProject());
  let served;
  try {
    served = await serveProject(project, { port, host });
  } catch (e) {
    throw new TrellisError('INVALID_INPUT', (e as Error).message);
  }
  await out(`trellis: serving ${project.root} at ${served.url}\n`);
  const stop = () => void served.close().then(() => (process.exitCode = 0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  // Stay up until a signal closes the server.
  await new Promise<never>(() => {});
  return 0;
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

async function demoProject(): Promise<Project> {
  const base = join(trellisHome(), 'demo');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, 'leaf-and-kettle-'));
  await createDemoProject(dir);
  await err(`trellis: not inside a Trellis project; serving a fresh copy of the demo project at ${dir}\n`);
  return openProject(dir);
}
