import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { registerPane } from './sessions.js';

/** A tmux server of the test's own, on `<home>/tmux.sock` (DESIGN §9's layout), never the default one. */
export interface TestTmux {
  readonly socket: string;
  /**
   * Starts a detached session named `id` running `command` (a plain bash by default) and, for a test
   * made with a project, records it in that project's session log as a live session.
   */
  session(id: string, command?: string, opts?: { cols?: number; rows?: number; cwd?: string }): Promise<void>;
  /** `tmux display -p` of a format for the session's pane. */
  display(id: string, format: string): string;
  run(...args: string[]): string;
  kill(): void;
}

export function tmuxEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PS1: '$ ', TERM: 'xterm-256color', ...extra };
  delete env.TMUX;
  delete env.TMUX_PANE;
  return env;
}

export function testTmux(home: string, project?: string): TestTmux {
  const socket = join(home, 'tmux.sock');
  // A shell with a known prompt ('$ ', even as root) and nothing from the user's own rc files.
  const rc = join(home, 'test-bashrc');
  writeFileSync(rc, "PS1='$ '\n");
  const run = (...args: string[]) => execFileSync('tmux', ['-S', socket, '-f', '/dev/null', ...args], { encoding: 'utf8', env: tmuxEnv() });
  return {
    socket,
    run,
    session: async (id, command = `bash --rcfile ${rc} --noprofile`, opts = {}) => {
      run('new-session', '-d', '-s', id, '-x', String(opts.cols ?? 80), '-y', String(opts.rows ?? 24), ...(opts.cwd ? ['-c', opts.cwd] : []), command);
      if (project) await registerPane(project, home, id);
    },
    display: (id, format) => run('display-message', '-p', '-t', `=${id}:`, format).trim(),
    kill: () => {
      try {
        run('kill-server');
      } catch {
        // already gone
      }
    },
  };
}
