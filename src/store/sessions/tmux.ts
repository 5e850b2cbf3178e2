import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { TrellisError } from '../../events/index.js';
import { trellisHome } from '../endpoint-record.js';

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

  run(args: readonly string[], input?: string): Promise<TmuxResult> {
    return new Promise((resolve, reject) => {
      const child = execFile('tmux', ['-S', this.socket, '-f', '/dev/null', ...args], { encoding: 'utf8', maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
        if (err && typeof (err as { code?: unknown }).code !== 'number') {
          reject(new TrellisError('SPAWN_FAILED', `cannot run tmux (${err.message}); install tmux (apt-get install tmux)`));
          return;
        }
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
      if (input !== undefined) child.stdin!.end(input);
    });
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
    // Set in the same command line as the session, so no event falls between the two.
    const hookArgs = Object.entries(hooks).flatMap(([hook, cmd]) => [';', 'set-hook', '-t', `=${name}:`, hook, cmd]);
    // remain-on-exit is set on this (our own) server before the pane exists, so even an agent that dies at once leaves its pane.
    const out = await this.must([
      'start-server', ';', 'set-option', '-g', 'remain-on-exit', 'on', ';',
      'new-session', '-d', '-s', name, '-c', cwd, '-x', '200', '-y', '50', ...envArgs, '-P', '-F', '#{pane_id}', command,
      ...hookArgs,
    ]);
    return out.trim().split('\n')[0]!;
  }

  async has(name: string): Promise<boolean> {
    return (await this.run(['has-session', '-t', `=${name}`])).code === 0;
  }

  /** Kills session `name`; a session that is already gone is not an error. */
  async kill(name: string): Promise<void> {
    await this.run(['kill-session', '-t', `=${name}`]);
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

  /** The pane's visible text (and `lines` of history above it). */
  capture(pane: string, lines = 0): Promise<string> {
    return this.must(['capture-pane', '-p', '-J', '-t', pane, ...(lines ? ['-S', `-${lines}`] : [])]);
  }

  /**
   * Delivers `text` as one bracketed paste (the agent reads it as pasted, not typed: newlines do not
   * submit), then a separate Enter that submits it.
   */
  async paste(pane: string, text: string): Promise<void> {
    const buffer = `trellis-${pane.replace(/\W/g, '')}`;
    await this.must(['load-buffer', '-b', buffer, '-'], text);
    await this.must(['paste-buffer', '-p', '-d', '-b', buffer, '-t', pane]);
    await this.must(['send-keys', '-t', pane, 'Enter']);
  }

  /** Stops the whole server (tests; never called on a user's sessions). */
  async killServer(): Promise<void> {
    await this.run(['kill-server']);
  }
}
