import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ROOT, run, tempDir, tempRepo, testEnv } from './repo.js';

/** The tmux socket of the Trellis home `home` (each test's own: never the default server). */
export const tmuxSocket = (home: string): string => join(home, 'tmux.sock');

/** Runs tmux on the test's own socket; null when it exits non-zero. */
export function tmux(home: string, ...args: string[]): string | null {
  try {
    return execFileSync('tmux', ['-S', tmuxSocket(home), ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return null;
  }
}

export const tmuxHas = (home: string, name: string): boolean => tmux(home, 'has-session', '-t', `=${name}`) !== null;

/** Stops the test's tmux server (and every session on it). */
export function killTmux(home: string): void {
  tmux(home, 'kill-server');
}

/** What a truthy check returned: never false, 0, '', null or undefined. */
type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

/** Polls `check` until it returns a truthy value, at most `timeoutMs`; throws with `what` otherwise. */
export async function waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs = 30_000): Promise<Truthy<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    const began = Date.now();
    try {
      const v = await check();
      if (v) return v as Truthy<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
    // Rest as long as the check took (at least 50 ms, at most 1 s): a check that runs the CLI costs a Node
    // start-up of CPU, and back to back those polls took a core from the very agent and serve being waited
    // on (the suite is CPU-bound on 2 cores). A cheap check still polls every 50 ms.
    await new Promise((r) => setTimeout(r, Math.min(1_000, Math.max(50, Date.now() - began))));
  }
}

/**
 * Records a tmux session the test started itself (on `<home>/tmux.sock`, named `id`) as a live session
 * of the project's session log: spawn, start and launch, the same events the runtime appends when it
 * launches an agent. The project's machine-local config holds the queue (no free memory is ever enough)
 * so the queue never launches the spawned session itself. `harness` is what the log says runs there (a
 * prose-reading one, `claude`, makes the session one a reply can loop in).
 */
export async function registerPane(dir: string, home: string, id: string, harness = 'shell'): Promise<void> {
  const local = join(dir, 'trellis.local.json');
  if (!existsSync(local)) writeFileSync(local, JSON.stringify({ sessions: { minFreeMb: 1e12 } }));
  const pane = tmux(home, 'display-message', '-p', '-t', `=${id}:`, '#{pane_id}')?.trim();
  if (!pane) throw new Error(`no tmux session ${id} on ${tmuxSocket(home)}`);
  const { openProject } = await import('../../src/store/compose/open-project.js');
  const p = openProject(dir);
  // A registered pane never forks a worktree: its base only says where the project stood.
  const base = tryGit(dir, 'rev-parse', 'HEAD') ?? '0'.repeat(40);
  const meta = () => ({ by: 'test', at: new Date().toISOString() });
  await p.sessionLog.write(id, { type: 'spawn', harness, task: `test pane ${id}`, nodes: [], issue: null, base, branch: `trellis/${id}`, worktree: join(home, 'panes', id), ...meta(), source: 'user' });
  await p.sessionLog.write(id, { type: 'start', ...meta(), source: 'supervisor' });
  await p.sessionLog.write(id, { type: 'launch', tmuxSession: id, pane, ...meta(), source: 'supervisor' });
}

function tryGit(cwd: string, ...args: string[]): string | null {
  try {
    return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

/**
 * A project whose PATH finds the stand-in agent (test/agents/claude-standin.mjs: Claude Code's hook
 * protocol and screens) as `claude`, unconfined: the stand-in logs into the Trellis home, which a confined
 * session cannot write (a real claude's confinement: sessions-confine-agents).
 */
export function standinClaudeProject(): { dir: string; home: string; env: NodeJS.ProcessEnv } {
  const dir = tempRepo();
  const bin = tempDir();
  writeFileSync(join(bin, 'claude'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(resolve(ROOT, 'test/agents/claude-standin.mjs'))} "$@"\n`);
  chmodSync(join(bin, 'claude'), 0o755);
  const env: NodeJS.ProcessEnv = { ...testEnv(dir), PATH: `${bin}:${process.env.PATH}` };
  writeFileSync(join(dir, 'trellis.local.json'), JSON.stringify({ sessions: { confine: 'off' } }));
  return { dir, home: env.TRELLIS_HOME!, env };
}

/**
 * Runs a session's command hook for `event` as installed (`<worktree>/<settings>`'s command line, claude's
 * `.claude/settings.local.json` by default) the way an agent runs one: `sh -c '<command>'` in the worktree,
 * `payload` on stdin, `env` as its environment (`as` replaces the event word the command ends with). Every
 * Node process it starts is counted (`nodes`): NODE_OPTIONS makes each one append its pid to a file first.
 */
export async function runInstalledHook(worktree: string, event: string, payload: string, env: NodeJS.ProcessEnv, opts: { as?: string; settings?: string } = {}): Promise<{ status: number | null; stdout: string; stderr: string; nodes: number; command: string }> {
  const settings = JSON.parse(readFileSync(join(worktree, opts.settings ?? '.claude/settings.local.json'), 'utf8')) as { hooks: Record<string, { hooks: { type: string; command: string }[] }[]> };
  const hook = settings.hooks[event]![0]!.hooks[0]!;
  if (hook.type !== 'command') throw new Error(`the ${event} hook is a ${hook.type} hook`);
  const count = tempDir();
  writeFileSync(join(count, 'count.cjs'), `require('fs').appendFileSync(${JSON.stringify(join(count, 'pids'))}, process.pid + '\\n');\n`);
  const command = opts.as ? hook.command.replace(new RegExp(`( session signal \\S+) ${event}\\b`), `$1 ${opts.as}`) : hook.command;
  const { code: status, stdout, stderr } = await run('/bin/sh', ['-c', command], { cwd: worktree, env: { ...env, NODE_OPTIONS: `--require ${join(count, 'count.cjs')}` } }, payload);
  const nodes = existsSync(join(count, 'pids')) ? readFileSync(join(count, 'pids'), 'utf8').trim().split('\n').length : 0;
  return { status, stdout, stderr, nodes, command: hook.command };
}
