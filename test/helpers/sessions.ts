import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

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

/** Polls `check` until it returns a truthy value, at most `timeoutMs`; throws with `what` otherwise. */
export async function waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs = 30_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
