import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { packageRoot } from '../../package-root.js';
import { shq } from '../agents/adapter.js';
import { HOOK_SCRIPT } from '../agents/hook-program.js';
import { PROXY_PORT } from './confine-relay.js';
import { sandboxArgv, type SandboxPlan } from './confine.js';

/**
 * What an agent program needs beyond a shell's sandbox (issue 45): its own state in its HOME writable —
 * where it keeps its config, login and transcripts, at the paths it uses unconfined (Trellis reads
 * claude's transcripts and codex's rollouts from there) — and a way to its model provider.
 */

/** The places in the person's HOME each agent program writes its own state to, that exist or it makes. */
export function agentStatePaths(harness: string, env: NodeJS.ProcessEnv): { readonly dirs: readonly string[]; readonly files: readonly string[] } {
  const home = env.HOME;
  if (!home) return { dirs: [], files: [] };
  if (harness === 'claude') {
    // CLAUDE_CONFIG_DIR moves both the folder and its .claude.json inside it.
    if (env.CLAUDE_CONFIG_DIR) return { dirs: [env.CLAUDE_CONFIG_DIR], files: [] };
    return { dirs: [join(home, '.claude')], files: [join(home, '.claude.json')] };
  }
  if (harness === 'codex') return { dirs: [env.CODEX_HOME || join(home, '.codex')], files: [] };
  // Gemini CLI: settings, trusted folders, chats and transcripts (0.61.0 reads GEMINI_CLI_HOME as that folder).
  if (harness === 'gemini') return { dirs: [env.GEMINI_CLI_HOME || join(home, '.gemini')], files: [] };
  // opencode keeps its config, data (conversations, its database, its logs), cache and state in the XDG folders.
  if (harness === 'opencode') return { dirs: XDG.map(([k, d]) => join(env[k] || join(home, d), 'opencode')), files: [] };
  return { dirs: [], files: [] };
}

/** The XDG base folders and their defaults under the home. */
const XDG = [
  ['XDG_CONFIG_HOME', '.config'],
  ['XDG_DATA_HOME', '.local/share'],
  ['XDG_CACHE_HOME', '.cache'],
  ['XDG_STATE_HOME', '.local/state'],
] as const;

/**
 * The home an agent sees: a private folder of the session's at $HOME, with every entry of the real home
 * mounted back read-only over it (`~/.ssh` left out), the agent's own folders mounted back writable, and
 * its own files copied in (the relay copies them back as they change: `sync`). The home itself is then
 * writable, but only in that private folder: a program that writes a file by renaming a temporary one
 * beside it (Claude Code's `~/.claude.json`) can, while no file it makes reaches the real home (a new
 * `~/.gitconfig` or `~/.bash_profile` would run as the person).
 */
export function agentHomeMounts(harness: string, env: NodeJS.ProcessEnv, privateHome: string): { readonly mounts: string[]; readonly sync: [string, string][] } {
  const home = env.HOME;
  if (!home || !existsSync(home)) return { mounts: [], sync: [] };
  const { dirs, files } = agentStatePaths(harness, env);
  for (const d of dirs) mkdirSync(d, { recursive: true });
  const own = new Set([...dirs, ...files]);
  const sync: [string, string][] = [];
  for (const f of files) {
    if (dirname(f) !== home || !existsSync(f)) continue;
    const copy = join(privateHome, basename(f));
    copyFileSync(f, copy);
    sync.push([copy, f]);
  }
  // Not the agent's own files' companions either (`.claude.json.lock`, a temporary file renamed over it): the
  // agent's private copy has its own, and a transient one of another session's may be gone by the mount.
  const mine = files.filter((f) => dirname(f) === home).map((f) => basename(f));
  const back = readdirSync(home).filter((e) => e !== '.ssh' && !own.has(join(home, e)) && !mine.some((m) => e === m || e.startsWith(`${m}.`)));
  return {
    mounts: [
      '--bind', privateHome, home,
      // `-try`: an entry removed since it was listed (another program's temporary file) is left out, not fatal.
      ...back.flatMap((e) => ['--ro-bind-try', join(home, e), join(home, e)]),
      ...dirs.flatMap((d) => ['--bind', d, d]),
      // A file of the agent's elsewhere than directly in the home (none today) is mounted as it is.
      ...files.filter((f) => dirname(f) !== home && existsSync(f)).flatMap((f) => ['--bind', f, f]),
    ],
    sync,
  };
}

/** The model providers each harness reaches by default (its own API, not the person's choice of another). */
const PROVIDERS: Readonly<Record<string, readonly string[]>> = {
  claude: ['api.anthropic.com:443'],
  codex: ['api.openai.com:443', 'chatgpt.com:443'],
  // The Gemini API, and Google's login (a "Login with Google" token refreshed, Code Assist).
  gemini: ['generativelanguage.googleapis.com:443', 'oauth2.googleapis.com:443', 'cloudcode-pa.googleapis.com:443'],
  // opencode's own (Zen, and models.dev, its models catalogue) and the two providers most configured. A
  // provider's baseURL in its config is not read: the agent can write that config, and so would widen its
  // own network; the project's sessions.network names it.
  opencode: ['opencode.ai:443', 'models.dev:443', 'api.anthropic.com:443', 'api.openai.com:443'],
};

/** The variables in the person's environment that point each harness's provider at another base URL. */
const BASE_URL_ENV: Readonly<Record<string, readonly string[]>> = {
  claude: ['ANTHROPIC_BASE_URL'],
  codex: ['OPENAI_BASE_URL'],
  gemini: ['GOOGLE_GEMINI_BASE_URL'],
  opencode: ['ANTHROPIC_BASE_URL', 'OPENAI_BASE_URL'],
};

/** The package registries every confined agent reaches, to install into its worktree. */
const REGISTRIES = ['registry.npmjs.org:443', 'pypi.org:443', 'files.pythonhosted.org:443'];

/** `host:port` of a URL in the person's environment (a provider's base URL), or none. */
function hostPort(url: string | undefined): string[] {
  if (!url) return [];
  try {
    const u = new URL(url);
    return [`${u.hostname}:${u.port || (u.protocol === 'https:' ? '443' : '80')}`];
  } catch {
    return [];
  }
}

/**
 * The network a confined agent reaches: its provider (and a base URL the person's environment gives it),
 * the package registries, and what the project's `sessions.network` adds. Nothing else: not the Trellis
 * serves and gateway on loopback (a loopback address is reachable only when the project names it).
 */
export function networkAllow(harness: string, project: readonly string[], env: NodeJS.ProcessEnv): string[] {
  const fromEnv = (BASE_URL_ENV[harness] ?? []).flatMap((k) => hostPort(env[k]));
  return [...new Set([...(PROVIDERS[harness] ?? []), ...fromEnv, ...REGISTRIES, ...project])];
}

/** The loopback ports on the allow-list: listened on inside the sandbox, so a provider on loopback keeps its URL. */
export function loopbackPorts(allow: readonly string[]): number[] {
  return allow.flatMap((a) => {
    const m = /^(127\.0\.0\.1|localhost):(\d+)$/i.exec(a);
    return m && Number(m[2]) !== PROXY_PORT ? [Number(m[2])] : [];
  });
}

const RELAY = () => join(packageRoot().dir, 'dist/src/store/sessions/confine/confine-relay.js');

/**
 * The pane's command line for a confined agent: the outer relay (outside, as the person), which starts,
 * once its sockets are up, the sandbox — with no network of its own but the relay's folder, where the
 * inner relay listens on loopback for the agent and then starts it. The agent's hooks reach Trellis through the
 * relay's signal socket (`TRELLIS_SIGNAL_RELAY`), for this session only. Each port of `expose` (opencode's
 * server, which Trellis drives) is listened on at the person's loopback by the outer relay and joined to
 * the same port inside: the sandbox's network reaches no other session's, so no other confined agent
 * reaches it (and it still asks its own password).
 */
export function confinedAgentCommand(env: NodeJS.ProcessEnv, plan: SandboxPlan, harness: string, session: string, trellisBin: string, allow: readonly string[], command: string, expose: readonly number[] = [], outside?: (relay: string) => string | null): string {
  // Short, for a Unix socket's 108-byte path, and private to the person.
  const dir = mkdtempSync(join(tmpdir(), 'trellis-confine-'));
  // The one folder the inner relay writes: the sockets of the agent's servers reached from outside.
  const inside = join(dir, 'in');
  mkdirSync(inside);
  // The hooks' shell program (relaySignalHook), read-only inside: it reaches the outer relay's HTTP socket, `<dir>/<session>`.
  writeFileSync(join(dir, 'signal.sh'), HOOK_SCRIPT, { mode: 0o600 });
  const ports = loopbackPorts(allow);
  const proxy = `http://127.0.0.1:${PROXY_PORT}`;
  const agentEnv: [string, string][] = [
    ['TRELLIS_SIGNAL_RELAY', join(dir, 'signal.sock')],
    ...['HTTPS_PROXY', 'HTTP_PROXY', 'https_proxy', 'http_proxy'].map((k) => [k, proxy] as [string, string]),
    ['NO_PROXY', '127.0.0.1,localhost'],
    ['no_proxy', '127.0.0.1,localhost'],
  ];
  const privateHome = join(dir, 'home');
  mkdirSync(privateHome);
  const { mounts, sync } = agentHomeMounts(harness, env, privateHome);
  const argv = sandboxArgv(env, { ...plan, homeMounts: mounts }, ['--ro-bind', dir, dir, '--bind', inside, inside, ...agentEnv.flatMap(([k, v]) => ['--setenv', k, v])]);
  // Inside: the relay listens, then starts the agent (and ends with it).
  const inner = [process.execPath, RELAY(), 'inner', dir, JSON.stringify(ports), JSON.stringify(expose), '--', '/bin/sh', '-c', command];
  // The relay outside is the pane's process: it starts the sandbox at once (see confine-relay.ts outer).
  const outer = [process.execPath, RELAY(), 'outer', dir, session, trellisBin, JSON.stringify(allow), JSON.stringify(sync), JSON.stringify(expose), '--'];
  const before = outside?.(dir);
  return `${before ? `${before}; ` : ''}exec ${[...outer, ...argv, ...inner].map(shq).join(' ')}`;
}

/** The command line a confined agent's hooks run for `trellis session signal` (the relay's light stand-in). */
export const relayHookCommand = (): string => `${shq(process.execPath)} ${shq(RELAY())}`;

/**
 * The command line a confined agent's `session signal` command hooks run (LaunchContext.hook): the hooks'
 * shell program in the relay's folder (found by TRELLIS_SIGNAL_RELAY, set inside the sandbox), which POSTs
 * the hook's JSON with curl to the outer relay's HTTP socket there (no Node process inside), else runs the
 * relay's stand-in (relayHookCommand) with it.
 */
export const relaySignalHook = (): string => `sh "\${TRELLIS_SIGNAL_RELAY%/*}/signal.sh" ${relayHookCommand()}`;
