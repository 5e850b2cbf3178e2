import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TrellisError } from '../events/index.js';
import { CONFIG_FILE } from '../store/project/config.js';
import { encodeProject, trellisHome } from '../store/trellis-home.js';
import { onlineHub, type HubRecord } from '../store/host/hub-record.js';
import { addToCatalog, CatalogBrokenError } from '../store/host/project-catalog.js';
import { mainCheckout } from '../store/host/register.js';
import { cliEntry } from '../store/host/run-cli.js';
import { startDetachedServe } from '../store/host/start-serve.js';
import { openProject } from './open-project.js';
import { DASHBOARD_PORT } from './dashboard-command.js';
import { err, out } from './output.js';
import { checkShape, type VerbContext } from './shape.js';
import { UsageError } from './usage-error.js';

const USAGE = 'trellis serve ui [--port <dashboard port>]';

/**
 * `trellis serve ui`: the explicit pairing of this project with the host dashboard. It makes sure this
 * project's backend and the host gateway run (starting what is missing, detached, each outliving this
 * command), catalogs this project and nothing else, and prints this project's page on the gateway.
 */
export async function runServeUi(ctx: VerbContext): Promise<number> {
  checkShape({ args: [], options: ['port'], usage: USAGE }, ctx);
  const port = ctx.options.port === undefined ? DASHBOARD_PORT : Number(ctx.options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port takes a port number from 0 to 65535, not '${String(ctx.options.port)}'`, USAGE);
  const home = trellisHome();
  const root = openProject(ctx.cwd).root;
  if (!root || !existsSync(join(root, CONFIG_FILE))) throw new TrellisError('INVALID_INPUT', `${ctx.cwd} is not inside a Trellis project; run 'trellis init' first`);

  const backend = await startDetachedServe(home, root);
  if (!('record' in backend)) throw new TrellisError('INVALID_INPUT', `this project's backend did not come online; the end of its log:\n${backend.logTail}`);
  try {
    await addToCatalog(home, mainCheckout(root) ?? root, new Date());
  } catch (e) {
    if (!(e instanceof CatalogBrokenError)) throw e;
    // The backend's record still lists it on the dashboard; the broken catalog is left for its owner.
    await err(`trellis: not cataloged: ${e.message}\n`);
  }
  const hub = (await onlineHub(home)) ?? (await startDetachedDashboard(home, port));
  await out(`${new URL(`p/${encodeProject(root)}/`, hub.url).href}\n`);
  return 0;
}

/** Starts `trellis dashboard --port <port>` detached (log: `$TRELLIS_HOME/dashboard.log`) and waits for its record. */
async function startDetachedDashboard(home: string, port: number): Promise<HubRecord> {
  const log = join(home, 'dashboard.log');
  mkdirSync(home, { recursive: true });
  const fd = openSync(log, 'a');
  let exited = false;
  try {
    const child = spawn(process.execPath, [cliEntry(), 'dashboard', '--port', String(port)], { env: { ...process.env, TRELLIS_HOME: home }, detached: true, stdio: ['ignore', fd, fd] });
    child.once('exit', () => (exited = true));
    child.unref();
  } finally {
    closeSync(fd);
  }
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline && !exited) {
    const hub = await onlineHub(home, { timeoutMs: 500 });
    if (hub) return hub;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new TrellisError('INVALID_INPUT', `the dashboard did not start; the end of ${log}:\n${readFileSync(log, 'utf8').split('\n').slice(-20).join('\n')}`);
}
