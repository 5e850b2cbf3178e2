import { join } from 'node:path';
import { TrellisError } from '../../../events/index.js';
import { trellisHome } from '../../trellis-home.js';
import { tmuxExec } from './tmux-exec.js';

export interface TmuxResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** A pane's liveness: whether its process exited (tmux keeps dead panes: `remain-on-exit`) and its pid. */
export interface PaneInfo {
  readonly dead: boolean;
  readonly pid: number;
}

/**
 * Trellis's own tmux server, on its own socket (`$TRELLIS_HOME/tmux.sock`), never the user's default
 * server. Sessions are addressed by exact name (`=<id>`: a bare name is a prefix match in tmux), panes
 * by pane id (`%N`). The server is started with no config file so a user's `.tmux.conf` cannot change
 * what a session does.
 */
export class Tmux {
  constructor(readonly socket: string) {}

  static forHome(env: NodeJS.ProcessEnv = process.env): Tmux {
    return new Tmux(join(trellisHome(env), 'tmux.sock'));
  }

  async run(args: readonly string[], input?: string): Promise<TmuxResult> {
    const r = await tmuxExec(this.socket, args, input === undefined ? undefined : Buffer.from(input));
    if (r.code === 127 && r.stderr.startsWith('tmux could not run')) throw new TrellisError('SPAWN_FAILED', `${r.stderr}; install tmux (apt-get install tmux)`);
    return { code: r.code ?? 1, stdout: r.stdout.toString(), stderr: r.stderr };
  }

  private async must(args: readonly string[], input?: string): Promise<string> {
    const r = await this.run(args, input);
    if (r.code !== 0) throw new TrellisError('SPAWN_FAILED', `tmux ${args[0]} failed: ${r.stderr.trim() || `exit ${r.code}`}`);
    return r.stdout;
  }

  /**
   * Starts `command` (a shell command line) detached in a new session named `name`, in `cwd`, with
   * `env` set; returns the pane id. The pane stays after its process exits, so a dead agent is seen.
   */
  async launch(name: string, cwd: string, env: Readonly<Record<string, string>>, command: string, hooks: Readonly<Record<string, string>> = {}): Promise<string> {
    const envArgs = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    // Set in the same command line as the session, so no event falls between the two. On the agent's pane,
    // not its session: the serve's watch links the pane's window into a session of its own (pane-hub.ts),
    // and tmux may then run a pane's hooks in that session, where a session's hook is not found.
    const hookArgs = Object.entries(hooks).flatMap(([hook, cmd]) => [';', 'set-hook', '-p', '-t', `=${name}:`, hook, cmd]);
    // remain-on-exit is set on this (our own) server before the pane exists, so even an agent that dies at once leaves its pane.
    const args = [
      'start-server', ';', 'set-option', '-g', 'remain-on-exit', 'on', ';',
      // Named, so tmux never renames it: automatic-rename has the server read the pane's process name from
      // /proc twice a second while it writes, about a fifth of what hosting a busy agent cost it (issue 40).
      'new-session', '-d', '-s', name, '-n', name, '-c', cwd, '-x', '200', '-y', '50', ...envArgs, '-P', '-F', '#{pane_id}', command,
      ...hookArgs,
    ];
    // A server whose last session just closed is still exiting: a client that reached its socket then is
    // told "server exited unexpectedly", and nothing of this command ran (the server and all it held are
    // gone). The next try starts a fresh server.
    for (let attempt = 1; ; attempt++) {
      const r = await this.run(args);
      if (r.code === 0) return r.stdout.trim().split('\n')[0]!;
      if (attempt < 3 && /server exited unexpectedly/.test(r.stderr)) continue;
      throw new TrellisError('SPAWN_FAILED', `tmux start-server failed: ${r.stderr.trim() || `exit ${r.code}`}`);
    }
  }

  async has(name: string): Promise<boolean> {
    return (await this.run(['has-session', '-t', `=${name}`])).code === 0;
  }

  /**
   * Kills session `name`; a session that is already gone is not an error. Its window first: a window a
   * serve's watch has linked into its own session (pane-hub.ts) would outlive `kill-session`, its agent running.
   */
  async kill(name: string): Promise<void> {
    await this.run(['kill-window', '-t', `=${name}:`, ';', 'kill-session', '-t', `=${name}`]);
  }

  /** The names of every session on this server (none when the server is not running). */
  async sessions(): Promise<Set<string>> {
    const r = await this.run(['list-sessions', '-F', '#{session_name}']);
    return new Set(r.code === 0 ? r.stdout.split('\n').filter(Boolean) : []);
  }

  /** The pane's liveness, or null when the pane (or the server) is gone. */
  async pane(pane: string): Promise<PaneInfo | null> {
    const r = await this.run(['display-message', '-p', '-t', pane, '#{pane_dead} #{pane_pid}']);
    if (r.code !== 0) return null;
    const [dead, pid] = r.stdout.trim().split(' ');
    return { dead: dead === '1', pid: Number(pid) };
  }

  /** Stops the whole server (tests; never called on a user's sessions). */
  async killServer(): Promise<void> {
    await this.run(['kill-server']);
  }
}
