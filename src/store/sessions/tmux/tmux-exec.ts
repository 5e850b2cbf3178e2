import { childProcess } from '../../lazy-builtins.js';
import { tmuxEnv } from './control-client.js';

export interface TmuxResult {
  readonly code: number | null;
  readonly stdout: Buffer;
  readonly stderr: string;
}

/**
 * Runs one `tmux -S <socket> ...` command (several with `;` arguments), `input` on its stdin: the one
 * place Trellis spawns tmux for a command. No config file (`-f /dev/null`): a server it starts is never
 * shaped by the user's `.tmux.conf`.
 */
export function tmuxExec(socket: string, args: readonly string[], input?: Uint8Array, opts: { timeoutMs?: number } = {}): Promise<TmuxResult> {
  return new Promise((resolve) => {
    const child = childProcess().spawn('tmux', ['-S', socket, '-f', '/dev/null', ...args], { stdio: [input ? 'pipe' : 'ignore', 'pipe', 'pipe'], env: tmuxEnv(), ...(opts.timeoutMs ? { timeout: opts.timeoutMs } : {}) });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout!.on('data', (d: Buffer) => out.push(d));
    child.stderr!.on('data', (d: Buffer) => err.push(d));
    child.on('error', (e) => resolve({ code: 127, stdout: Buffer.alloc(0), stderr: `tmux could not run: ${e.message}` }));
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString().trim() }));
    if (input && child.stdin) {
      child.stdin.on('error', () => {});
      child.stdin.end(input);
    }
  });
}
