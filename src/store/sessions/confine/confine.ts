import { execFile } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { basename, delimiter, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { TrellisError } from '../../../events/index.js';
import type { Confinement } from '../../../projections/index.js';
import type { ConfineSetting } from '../../project/config.js';
import { shq } from '../agents/adapter.js';
import { packageRoot } from '../../package-root.js';

export type { Confinement } from '../../../projections/index.js';


/**
 * The harnesses bubblewrap wraps whole: every one. A shell has no sandbox of its own and no network; an
 * agent (claude, codex, gemini, opencode) reaches its provider through Trellis's relay (confine-agents.ts).
 * opencode's own HTTP server, which Trellis drives, listens inside the sandbox's network and is reached
 * from outside through the relay (the port Trellis chose, on the person's loopback); its event-stream
 * watcher runs outside.
 */
export const BWRAP_HARNESSES: ReadonlySet<string> = new Set(['shell', 'claude', 'codex', 'gemini', 'opencode']);

/** What a confined session may do, in words, for its views. */
const BWRAP_SCOPE = 'writes only its worktree and its own branch; no network; no Trellis home, no ~/.ssh';
const AGENT_SCOPE = "writes only its worktree, its own branch and its own state in your home; network only to its provider, the package registries and the project's allow-list; no Trellis home, no ~/.ssh";

/** What to do instead, named by every refusal: run the project's sessions unconfined, on purpose and visibly. */
const OFF = 'or run sessions unconfined with "sessions": { "confine": "off" } in trellis.json';

/** The `bwrap` program on `env`'s PATH, or null. */
export function findBwrap(env: NodeJS.ProcessEnv): string | null {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    const path = join(dir, 'bwrap');
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here
    }
  }
  return null;
}

/** A probe's answer: bubblewrap's version, or why it cannot confine here with its repair. */
export type BwrapProbe = { readonly ok: true; readonly path: string; readonly version: string } | { readonly ok: false; readonly problem: string; readonly repair: string };

// A memo of a fact of this machine (the program at a path, the kernel's namespaces), by the program's path.
const probes = new Map<string, Promise<BwrapProbe>>();

/**
 * Whether bubblewrap can confine here: it is on PATH, and a sandbox like a session's (its own mount,
 * network, pid and ipc namespaces, no capabilities) starts. Namespaces blocked by AppArmor
 * (Ubuntu's `kernel.apparmor_restrict_unprivileged_userns`) or a container fail the second step.
 */
export function probeBwrap(env: NodeJS.ProcessEnv): Promise<BwrapProbe> {
  const path = findBwrap(env);
  if (!path) return Promise.resolve({ ok: false, problem: 'bubblewrap (bwrap) is not on PATH', repair: `install bubblewrap (apt-get install bubblewrap; dnf install bubblewrap), ${OFF}` });
  let probe = probes.get(path);
  if (!probe) {
    probe = runProbe(path);
    probes.set(path, probe);
  }
  return probe;
}

function runProbe(path: string): Promise<BwrapProbe> {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-net', '--unshare-pid', '--unshare-ipc', '--cap-drop', 'ALL', '--die-with-parent', '--', 'sh', '-c', 'exit 0'];
  return new Promise((done) => {
    execFile(path, args, { timeout: 10_000 }, (err, _out, stderr) => {
      if (err) {
        const said = String(stderr).trim().split('\n')[0] || err.message;
        done({
          ok: false,
          problem: `bubblewrap cannot start a sandbox here: ${said}`,
          repair: `allow unprivileged user namespaces (sysctl kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu, kernel.unprivileged_userns_clone=1 on older Debian; in a container, run it with user namespaces allowed), ${OFF}`,
        });
        return;
      }
      execFile(path, ['--version'], { timeout: 5_000 }, (_e, out) => done({ ok: true, path, version: /\d+\.\d+(\.\d+)?/.exec(String(out))?.[0] ?? 'unknown version' }));
    });
  });
}

/**
 * What confines a session of `harness` here. Refuses (SPAWN_FAILED, with the repair) when the project
 * wants it confined and this machine cannot: never a silent fall back to unconfined.
 */
export async function confinementFor(harness: string, setting: ConfineSetting, env: NodeJS.ProcessEnv): Promise<Confinement> {
  if (setting === 'off') return { confined: false, why: 'sessions.confine is "off" in the project\'s config (trellis.json or trellis.local.json)' };
  if (!BWRAP_HARNESSES.has(harness)) return { confined: false, why: `Trellis does not confine the ${harness} harness yet: its agent runs with your user's rights` };
  const probe = await probeBwrap(env);
  if (!probe.ok) throw new TrellisError('SPAWN_FAILED', `a ${harness} session runs confined by bubblewrap, and ${probe.problem}: ${probe.repair}`);
  return { confined: true, by: `bubblewrap ${probe.version} (${harness === 'shell' ? BWRAP_SCOPE : AGENT_SCOPE})` };
}

/** The places a session's sandbox is built from. */
export interface SandboxPlan {
  readonly worktree: string;
  /** The project's main checkout. */
  readonly mainRoot: string;
  readonly trellisHome: string;
  readonly home: string | undefined;
  /** The uploads folder (pasted files, whose paths are typed into the pane): mounted read-only. */
  readonly uploads?: string | undefined;
  /** The session's branch, as `refs/heads/<branch>` names it. */
  readonly branch: string;
  /** Mounts that stand in for the home, before the ones below it (an agent's: confine-agents.ts agentHomeMounts). */
  readonly homeMounts?: readonly string[];
  /** Files in the Trellis home the session's own agent reads, mounted back read-only (its opencode's endpoint: port and password). */
  readonly reveal?: readonly string[];
}

/** The repository's shared git directory and the worktree's own admin directory, read from the worktree's `.git` file. */
export function worktreeGitDirs(worktree: string): { readonly common: string; readonly admin: string } {
  const pointer = /^gitdir: (.+)$/m.exec(readFileSync(join(worktree, '.git'), 'utf8'));
  if (!pointer) throw new TrellisError('SPAWN_FAILED', `${worktree}/.git does not name its git directory`);
  const admin = resolve(worktree, pointer[1]!.trim());
  const common = resolve(admin, readFileSync(join(admin, 'commondir'), 'utf8').trim());
  return { common, admin };
}

/**
 * bubblewrap's arguments for a session (in order: a later mount covers an earlier one). Everything is
 * read-only but the worktree and what `git commit` on its own branch writes: the object store, the
 * worktree's admin directory (its HEAD, index, logs) and the directory its branch's ref and reflog live
 * in — a ref update takes `<ref>.lock` beside the ref and renames it, so the directory, not the file,
 * must be writable. The config, hooks, packed-refs, trunk and `refs/trellis/*` stay read-only, and so do
 * the pointers a git run outside would follow (the worktree's `.git` file, the admin dir's `commondir`
 * and `gitdir`): a changed pointer could hand Trellis's own git a config the agent wrote. The Trellis
 * home (other worktrees, tmux socket, hub.json, keys) is an empty read-only tmpfs with the worktree
 * mounted back (and, read-only, a checkout or uploads folder that lies in it, as the demo's does, and
 * the files of its own the agent reads: `reveal`, opencode's endpoint);
 * `~/.ssh` likewise; /tmp and /run are private. No network (so not the serves on
 * loopback), its own pids, no capabilities even as root.
 */
export function bwrapArgs(plan: SandboxPlan): string[] {
  const { common, admin } = worktreeGitDirs(plan.worktree);
  const refDir = dirname(join(common, 'refs/heads', plan.branch));
  const logDir = dirname(join(common, 'logs/refs/heads', plan.branch));
  // A packed branch has no loose ref directory yet, and bubblewrap mounts only what exists.
  for (const d of [refDir, logDir]) mkdirSync(d, { recursive: true });
  const ro = (p: string | undefined): string[] => (p && existsSync(p) ? ['--ro-bind', p, p] : []);
  const hidden = (p: string | undefined): string[] => (p && existsSync(p) ? ['--tmpfs', p, '--remount-ro', p] : []);
  const ssh = plan.home ? join(plan.home, '.ssh') : undefined;
  // Beside its own branch, the other loose refs there (other sessions' branches) stay read-only: a file
  // mounted over itself can be neither replaced nor removed.
  const own = basename(plan.branch);
  const others = readdirSync(refDir, { withFileTypes: true }).filter((e) => e.name !== own && !e.name.endsWith('.lock'));
  return [
    '--ro-bind', '/', '/',
    '--dev', '/dev',
    '--proc', '/proc',
    '--tmpfs', '/tmp',
    '--tmpfs', '/run',
    // Back, read-only, whatever a private /tmp covered (a checkout or home under /tmp, and Trellis itself:
    // the `trellis` a session runs, installed or cloned under /tmp, as a CI clone may be).
    ...ro(packageRoot().dir),
    ...ro(plan.home),
    ...(plan.homeMounts ?? []),
    ...ro(plan.uploads),
    ...ro(plan.mainRoot),
    ...ro(common),
    '--tmpfs', plan.trellisHome,
    // Back, read-only, what the home's tmpfs covered of them: a checkout in the Trellis home (the demo's,
    // `<home>/demo/…`), or the uploads folder there.
    ...[plan.uploads, plan.mainRoot, common, ...(plan.reveal ?? [])].flatMap((p) => (p && below(p, plan.trellisHome) ? ro(p) : [])),
    '--bind', plan.worktree, plan.worktree,
    '--bind', join(common, 'objects'), join(common, 'objects'),
    '--bind', admin, admin,
    ...ro(join(admin, 'commondir')),
    ...ro(join(admin, 'gitdir')),
    '--bind', refDir, refDir,
    ...others.flatMap((e) => ro(join(refDir, e.name))),
    '--bind', logDir, logDir,
    ...ro(join(plan.worktree, '.git')),
    ...hidden(ssh),
    // Read-only only now (this one mount, not the ones on it): bubblewrap makes each mount point above
    // under the home in its tmpfs, which it cannot once the tmpfs is read-only (`Can't mkdir parents`).
    '--remount-ro', plan.trellisHome,
    '--unshare-net', '--unshare-pid', '--unshare-ipc',
    '--cap-drop', 'ALL',
    '--die-with-parent',
    '--chdir', plan.worktree,
    '--unsetenv', 'SSH_AUTH_SOCK',
    '--unsetenv', 'TRELLIS_API_URL',
    // The home is read-only: npm's cache goes to the private /tmp.
    '--setenv', 'npm_config_cache', '/tmp/.npm',
    '--setenv', 'TRELLIS_CONFINED', 'bubblewrap',
  ];
}

/** Whether `path` is `dir` or lies below it. */
function below(path: string, dir: string): boolean {
  const p = resolve(path);
  const d = resolve(dir);
  return p === d || p.startsWith(d.endsWith(sep) ? d : d + sep);
}

/** The argv that runs a command (appended) inside the session's sandbox, by the bubblewrap on `env`'s PATH. */
export function sandboxArgv(env: NodeJS.ProcessEnv, plan: SandboxPlan, extra: readonly string[] = []): string[] {
  const bwrap = findBwrap(env);
  if (!bwrap) throw new TrellisError('SPAWN_FAILED', `bubblewrap (bwrap) is not on PATH, and the session runs confined: install bubblewrap (apt-get install bubblewrap), ${OFF}`);
  // Back, read-only, the folders of PATH that the private /tmp covered: the programs the session runs are the person's.
  const path = (env.PATH ?? '').split(delimiter).filter((d) => isAbsolute(d) && below(d, '/tmp') && existsSync(d));
  return [bwrap, ...bwrapArgs(plan), ...[...new Set(path)].flatMap((d) => ['--ro-bind', d, d]), ...extra, '--'];
}

/** The pane's command line, run inside the session's sandbox. */
export function confinedCommand(env: NodeJS.ProcessEnv, plan: SandboxPlan, command: string): string {
  return `exec ${sandboxArgv(env, plan).map(shq).join(' ')} /bin/sh -c ${shq(command)}`;
}
