/**
 * What `trellis serve` decides before anything starts, apart from the CLI that parses its flags and
 * prints: whether it opens a public face (and refuses one without an admin password), where the API
 * listens then, and which project it serves — the one the folder belongs to, else the demo copy, kept
 * between runs (DESIGN §10; README "Try it").
 */
import { existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { TrellisError } from '../../events/index.js';
import { isLoopback, type EndpointIdentity } from '../host/endpoint-record.js';
import { readHubConfig } from '../host/hub-config.js';
import { CONFIG_FILE } from '../project/config.js';
import { createDemoProject } from './demo.js';
import { openProject, type Project } from '../compose/open-project.js';

/** How a serve faces the network: where its API listens, and whether a gateway takes the asked-for address. */
export interface ServeFace {
  /** A public face: a gateway on the asked-for host and port, gated by the admin password. */
  readonly public: boolean;
  /** Where the supervisor's API listens: the asked-for address, or any free loopback port behind a public face. */
  readonly api: { readonly port: number; readonly host: string };
}

/**
 * The serve's face for `--public` / `--host`. A non-loopback address is a public face too (DESIGN §10):
 * the raw API, terminals included, never listens there; a gateway does, gated by the admin password
 * exactly as with --public. A public face without a password would make everyone who reaches it admin:
 * refused (INVALID_INPUT, naming the repair) before anything starts.
 */
export function serveFace(asked: { port: number; host: string; public: boolean }, home: string): ServeFace {
  const isPublic = asked.public || !isLoopback(asked.host);
  if (isPublic && !readHubConfig(home).adminPassword) {
    const flag = asked.public ? '--public' : `--host ${asked.host}`;
    const why = asked.public ? '' : ` (${asked.host} is not a loopback address: anyone who can reach it would run this project's terminals)`;
    throw new TrellisError('INVALID_INPUT', `serve ${flag} refuses to start without an admin password${why}. Repair: run 'trellis dashboard password' first${asked.public ? '' : ', or serve on --host 127.0.0.1'}`);
  }
  // With a public face the raw proxy moves to a free loopback port (still TRELLIS_API_URL); the gateway takes the asked-for one.
  return { public: isPublic, api: isPublic ? { port: 0, host: '127.0.0.1' } : { port: asked.port, host: asked.host } };
}

/** The project a serve serves: its root, and the identity its endpoint record is checked against. */
export interface ServedProject {
  readonly root: string;
  readonly identity: EndpointIdentity;
}

/**
 * Which project `trellis serve` in `cwd` serves: the Trellis project the folder belongs to; outside one
 * (no git repository, or one without trellis.json) the demo project — one copy under
 * `<home>/demo/leaf-and-kettle`, made on the first run and reused after, so what was done in it stays;
 * `fresh` sets the old copy aside (renamed, never deleted) and makes a new one. What it did is said
 * through `say`, a line at a time, as it happens.
 */
export async function projectToServe(cwd: string, opts: { home: string; fresh: boolean; say: (line: string) => Promise<void> | void }): Promise<ServedProject> {
  const p = trellisProject(cwd) ?? openProject(await demoCopy(opts));
  const dotGit = join(p.root!, '.git');
  const worktree = existsSync(dotGit) && statSync(dotGit).isFile();
  return { root: p.root!, identity: { toplevel: p.root!, gitCommonDir: p.gitdir, worktree } };
}

/** The Trellis project `cwd` belongs to, or null outside one. */
function trellisProject(cwd: string): Project | null {
  try {
    const p = openProject(cwd);
    return p.root && existsSync(join(p.root, CONFIG_FILE)) ? p : null;
  } catch (e) {
    if (e instanceof TrellisError && e.code === 'NOT_A_REPOSITORY') return null;
    throw e;
  }
}

/** The demo copy's folder: reused when kept (and not `fresh`), else made anew, an old copy set aside first. */
async function demoCopy(opts: { home: string; fresh: boolean; say: (line: string) => Promise<void> | void }): Promise<string> {
  const base = join(opts.home, 'demo');
  mkdirSync(base, { recursive: true });
  const dir = join(base, 'leaf-and-kettle');
  const kept = existsSync(join(dir, CONFIG_FILE));
  if (kept && !opts.fresh) {
    await opts.say(`not inside a Trellis project; serving the demo project at ${dir} ('trellis serve --fresh' starts a new copy)`);
    return dir;
  }
  if (existsSync(dir)) {
    // Set aside, not deleted: whatever was done in the old copy stays on disk.
    const aside = `${dir}-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    renameSync(dir, aside);
    await opts.say(`the previous demo copy is kept at ${aside}`);
  }
  await createDemoProject(dir);
  await opts.say(`not inside a Trellis project; serving a fresh copy of the demo project at ${dir}`);
  return dir;
}
