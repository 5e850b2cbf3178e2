/**
 * The rooms of `store/`, lowest first, which `test/layers.test.ts` checks every import between two of them
 * against (a table of its own, as `MAY_IMPORT` is for the layers; keep in step with ARCHITECTURE.md, "Rooms
 * of store/"). A room imports only rooms below it; `base` is the loose files at the top of `store/`. The
 * project context (`project`) imports no resource, the resources declare what they need of it, `compose`
 * builds them all and `setup` works on the whole. A test beside the code may import upward for its "given"
 * state (it opens a project).
 */
export const STORE_ROOMS: readonly string[] = [
  'base',
  'git',
  'streams',
  'project',
  'sync',
  'evidence',
  'forge',
  'spec',
  'issues',
  'eval',
  'sessions',
  'board',
  'host',
  'compose',
  'setup',
];

/** The room of a path under `src/store/`: its first folder, or `base` for a loose file. */
export const roomOf = (path: string): string => {
  const parts = path.split('/');
  return parts.length === 2 ? 'base' : parts[1]!;
};

/**
 * The rooms of `store/sessions/`, lowest first (issue 41: a new agent or version touches one folder;
 * keep in step with ARCHITECTURE.md, "Rooms of store/sessions/"). `agents/` holds the adapter contract
 * and one folder per agent; one agent's folder never imports another's.
 */
export const SESSION_ROOMS: readonly string[] = ['tmux', 'worktrees', 'log', 'agents', 'confine', 'usage', 'checks', 'verbs'];

/** The room of a path under `src/store/sessions/` (`agents/claude` for an agent's folder), or null for a loose file. */
export const sessionRoomOf = (path: string): string | null => {
  const parts = path.split('/');
  if (parts.length === 3) return null;
  return parts[2] === 'agents' && parts.length > 4 ? `agents/${parts[3]}` : parts[2]!;
};

/** Why an import inside `store/sessions/` breaks the order of its rooms, or null when it keeps it. */
function sessionRoomViolation(from: string, to: string): string | null {
  const [a, b] = [sessionRoomOf(from), sessionRoomOf(to)];
  for (const [path, room] of [[from, a], [to, b]] as const) {
    if (room === null) return `store/${path.split('/').slice(1).join('/')} is in no room of store/sessions/ (SESSION_ROOMS)`;
    if (!SESSION_ROOMS.includes(room.split('/')[0]!)) return `store/sessions/${room} is not in the rooms of store/sessions/ (SESSION_ROOMS)`;
  }
  if (a === b) return null;
  if (a!.startsWith('agents/') && b!.startsWith('agents/')) return `store/sessions/${a} may not import store/sessions/${b}: one agent's folder never imports another's`;
  const [ra, rb] = [a!.split('/')[0]!, b!.split('/')[0]!];
  if (ra === rb || SESSION_ROOMS.indexOf(rb) < SESSION_ROOMS.indexOf(ra)) return null;
  return `store/sessions/${ra} may not import store/sessions/${rb}: a room of store/sessions/ imports only the rooms below it (${SESSION_ROOMS.join(' < ')})`;
}

/** Why an import from one room of `store/` to another breaks their order, or null when it keeps it. */
export function roomViolation(from: string, to: string): string | null {
  const [a, b] = [roomOf(from), roomOf(to)];
  if (a === 'sessions' && b === 'sessions') return sessionRoomViolation(from, to);
  if (a === b) return null;
  for (const room of [a, b]) if (!STORE_ROOMS.includes(room)) return `store/${room} is not in the rooms of store/ (STORE_ROOMS)`;
  if (STORE_ROOMS.indexOf(b) < STORE_ROOMS.indexOf(a)) return null;
  return `store/${a} may not import store/${b}: a room of store/ imports only the rooms below it (${STORE_ROOMS.join(' < ')})`;
}
