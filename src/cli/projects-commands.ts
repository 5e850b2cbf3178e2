import { basename, resolve } from 'node:path';
import { trellisHome } from '../store/trellis-home.js';
import { forgetProject } from '../store/host/forget-project.js';
import { readHubConfig } from '../store/host/hub-config.js';
import { serveProject } from '../store/host/host-runs.js';
import { OnlineVerdicts } from '../store/host/online-verdict.js';
import { findProject, ProjectLister, type ProjectList, type ProjectRow } from '../store/host/project-list.js';
import { readHosts } from '../store/host/hosts.js';
import { RemoteProjects } from '../store/host/remote-projects.js';
import { registerProject } from '../store/host/register-project.js';
import { err, out } from './output.js';
import { checkShape, type VerbContext } from './shape.js';
import { UsageError } from './usage-error.js';
import { unknownAction } from './unknown-action.js';

export const USAGE = {
  ls: 'trellis projects ls [--json [--records]]',
  add: 'trellis projects add [<path>] [--git] [--init] [--harness <name>] [--json]',
  rm: 'trellis projects rm <id|path> [--json]',
  serve: 'trellis projects serve <id> [--json]',
};

const json = (value: unknown) => out(`${JSON.stringify(value, null, 2)}\n`);

/** `trellis projects ls|add|rm`: the host's project catalog, through the same verbs as the dashboard's /projects routes. */
export async function runProjects(action: string | undefined, ctx: VerbContext): Promise<number> {
  if (action === 'ls' || action === undefined) return list(ctx);
  if (action === 'add') return add(ctx);
  if (action === 'rm') return rm(ctx);
  if (action === 'serve') return serve(ctx);
  throw unknownAction('projects', action, USAGE);
}

/** Every project this machine knows (cataloged, or claimed by a running serve), each probed live. */
async function list(ctx: VerbContext): Promise<number> {
  checkShape({ args: [], options: ['json', 'records'], usage: USAGE.ls }, ctx);
  const home = trellisHome();
  if (ctx.options.records && !ctx.options.json) throw new UsageError('--records goes with --json', USAGE.ls);
  // Another machine's listing (--records) is this machine's alone: hosts are never chained.
  // One run's verdicts: a row listed online gives its record (--records) without a second probe.
  const lister = new ProjectLister(new OnlineVerdicts(home));
  const listed = ctx.options.records ? await lister.listProjects(readHubConfig(home)) : await withHosts(home, await lister.listProjects(readHubConfig(home)));
  if (ctx.options.records) await json({ ...listed, projects: await Promise.all(listed.projects.map((p) => withRecord(lister.verdicts, p))) });
  else if (ctx.options.json) await json(listed);
  else if (listed.projects.length === 0 && !listed.catalogError) await out("no projects yet; add one with 'trellis projects add <path>'\n");
  else await out(listed.projects.map(rowLine).join(''));
  // A registered machine that cannot be reached says so, in ssh's words, whatever the format.
  for (const h of listed.hosts ?? []) if (h.state !== 'online') await err(`trellis: host ${h.name} is unreachable: ${h.reason ?? h.state}${h.repair ? ` (${h.repair})` : ''}\n`);
  // A catalog that cannot be read is loud: the list above holds only what running backends claim.
  if (listed.catalogError) {
    await err(`trellis: ${listed.catalogError}\n`);
    return 1;
  }
  return 0;
}

/**
 * An online row with the verified record of its backend (url, instance, root): what another host's
 * gateway forwards to through SSH and proves through that forward before trusting it.
 */
async function withRecord(verdicts: OnlineVerdicts, p: ProjectRow): Promise<ProjectRow & { record?: { url: string; instanceId: string; root: string } }> {
  if (!p.online) return p;
  const r = await verdicts.onlineRecord(p.id);
  return r ? { ...p, record: { url: r.url, instanceId: r.instanceId, root: r.root } } : p;
}

/** How long `projects ls` waits for the registered hosts to answer over ssh. */
const HOSTS_WAIT_MS = 15_000;

/** The local list with every registered host's projects, as the dashboard lists them (one ssh connection per host, closed after). */
async function withHosts(home: string, local: ProjectList): Promise<ProjectList> {
  if (!readHosts(home).length) return local;
  const remote = new RemoteProjects(home, `cli-${process.pid}`);
  try {
    await remote.settled(HOSTS_WAIT_MS);
    return { ...local, projects: [...local.projects, ...remote.rows()], hosts: remote.statuses() };
  } finally {
    await remote.close();
  }
}

const rowLine = (p: ProjectRow): string =>
  `${p.online ? 'online ' : 'offline'}  ${p.id}  ${p.root}${p.host ? `  (on ${p.host})` : ''}${p.name !== basename(p.root) ? `  "${p.name}"` : ''}${p.cataloged ? '' : '  (not cataloged: claimed by a running serve)'}\n`;

/** Registers a folder (default: here), its main checkout cataloged; `--git` runs git init first, `--init`/`--harness` the real trellis init. */
async function add(ctx: VerbContext): Promise<number> {
  const usage = USAGE.add;
  if (ctx.args.length > 1) throw new UsageError(`unexpected '${ctx.args.slice(1).join(' ')}'`, usage);
  checkShape({ args: ctx.args.length ? ['path'] : [], options: ['git', 'init', 'harness', 'json'], usage }, ctx);
  const harness = ctx.options.harness as string | undefined;
  const init = ctx.options.init === true || harness !== undefined;
  const r = await registerProject(trellisHome(), { path: resolve(ctx.cwd, ctx.args[0] ?? '.'), gitInit: ctx.options.git === true, ...(init ? { init: harness !== undefined ? { harness } : {} } : {}) });
  if (ctx.options.json) await json(r);
  else await out(`${r.transcript}${r.added ? 'registered' : 'already registered:'} ${r.project.root} as ${r.project.id}\n`);
  return 0;
}

/** Starts a known project's backend, detached (the dashboard's Start; another host's gateway runs it over ssh). */
async function serve(ctx: VerbContext): Promise<number> {
  checkShape({ args: ['id'], options: ['json'], usage: USAGE.serve }, ctx);
  const home = trellisHome();
  const served = await serveProject(home, findProject(home, ctx.args[0]!));
  if (ctx.options.json) await json(served);
  else await out(`online at ${served.url} (pid ${served.pid})\n`);
  return 0;
}

/** Forgets a cataloged project by its id or a path inside it; its files are never touched. */
async function rm(ctx: VerbContext): Promise<number> {
  checkShape({ args: ['id|path'], options: ['json'], usage: USAGE.rm }, ctx);
  const which = ctx.args[0]!;
  // An id never holds a slash; a path to forget by names one (`./app`, `/srv/app`) or is `.`/`..`.
  const ref = which.includes('/') || which === '.' || which === '..' ? { path: resolve(ctx.cwd, which) } : { id: which };
  const forgot = await forgetProject(trellisHome(), ref);
  if (ctx.options.json) await json(forgot);
  else await out(`forgot ${forgot.root} (${forgot.id}); its files are untouched\n`);
  return 0;
}
