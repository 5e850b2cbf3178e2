import { gateOf } from '../store/host/project-list.js';
import type { Caller } from './gateway-state.js';

/**
 * What runs commands as the host user through a project's API: starting or resuming an agent, typing
 * into its terminal (a prompt, raw keys, an interrupt, the pane WebSocket unless opened read-only),
 * running its checks, merging its work, writing an upload into the worker's filesystem, and a sync
 * (git with the host user's credentials). A project gate's password opens the project's data and
 * issues; these need admin or a gate that grants `shell` (DESIGN §10).
 */
const SHELL_POSTS: readonly [RegExp, string][] = [
  [/^\/api\/sessions\/?$/, 'starting a session'],
  [/^\/api\/sessions\/[^/]+\/prompt$/, "typing into a session's terminal"],
  [/^\/api\/sessions\/[^/]+\/rawkey$/, 'sending keys to a session'],
  [/^\/api\/sessions\/[^/]+\/interrupt$/, 'interrupting a session'],
  [/^\/api\/sessions\/[^/]+\/resume$/, 'resuming a session'],
  [/^\/api\/sessions\/[^/]+\/check$/, "running a session's checks"],
  [/^\/api\/sessions\/[^/]+\/merge$/, "merging a session's work"],
  [/^\/api\/uploads\/?$/, 'uploading a file to the worker'],
  [/^\/api\/sync\/?$/, 'syncing with the remote'],
];

/** The action a request to a project's API (the `/p/<id>` prefix stripped) takes as the host user, or null. */
export function shellAction(method: string, path: string, upgrade: boolean): string | null {
  // Reads come first and cost nothing: no GET, HEAD or OPTIONS runs a command (every proxied 304 takes this path).
  if (!upgrade && (method === 'GET' || method === 'HEAD' || method === 'OPTIONS')) return null;
  const q = path.indexOf('?');
  const pathname = q < 0 ? path : path.slice(0, q);
  const query = new URLSearchParams(q < 0 ? '' : path.slice(q + 1));
  // Compared as the backend's router matches them: percent-decoded (an undecodable path is taken as the
  // worst case), doubled slashes folded, any letter case.
  let p: string;
  try {
    p = decodeURI(pathname).replace(/\/{2,}/g, '/').toLowerCase();
  } catch {
    p = '/api/sessions';
  }
  if (upgrade) {
    const modes = query.getAll('mode');
    const readOnly = modes.length > 0 && modes.every((m) => m === 'read');
    return /^\/api\/sessions\/[^/]+\/socket\/?$/.test(p) && !readOnly ? "typing into a session's terminal" : null;
  }
  for (const [re, what] of SHELL_POSTS) if (re.test(p)) return what;
  return null;
}

/** Whether `caller` holds a shell scope on project `id`: admin (or loopback before any password), or a gate login whose gate says `shell: true`. */
export function hasShell(caller: Caller, id: string): boolean {
  if (caller.admin) return true;
  const gate = gateOf(caller.hub, id);
  if (gate === 'loopback') return caller.loopback;
  return typeof gate === 'object' && gate.shell === true && !!caller.grant?.projects.has(id);
}
