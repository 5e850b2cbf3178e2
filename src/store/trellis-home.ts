import { crypto } from './lazy-builtins.js';
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';

/**
 * Where Trellis keeps what belongs to the user rather than to one project (endpoint records, the catalog,
 * the hub config, worktrees and tmux sockets), and the slot a project's root has there. Base: the session
 * and host rooms both find their files through it.
 */

/** The per-user home of Trellis: `~/.trellis`, or TRELLIS_HOME. */
export const trellisHome = (env: NodeJS.ProcessEnv = process.env): string => env.TRELLIS_HOME || join(homedir(), '.trellis');

/** Readable and collision-free: the folder's name, sanitized, plus a short hash of its real path. */
export function encodeProject(root: string): string {
  const real = safeRealpath(root);
  const name = basename(real).toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[-.]+|-+$/g, '').slice(0, 40) || 'project';
  return `${name}-${crypto().createHash('sha256').update(real).digest('hex').slice(0, 12)}`;
}

/** The real path, or the path as given when it cannot be resolved (gone, unreadable). */
export function safeRealpath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}
