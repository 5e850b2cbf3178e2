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

/** Why an import from one room of `store/` to another breaks their order, or null when it keeps it. */
export function roomViolation(from: string, to: string): string | null {
  const [a, b] = [roomOf(from), roomOf(to)];
  if (a === b) return null;
  for (const room of [a, b]) if (!STORE_ROOMS.includes(room)) return `store/${room} is not in the rooms of store/ (STORE_ROOMS)`;
  if (STORE_ROOMS.indexOf(b) < STORE_ROOMS.indexOf(a)) return null;
  return `store/${a} may not import store/${b}: a room of store/ imports only the rooms below it (${STORE_ROOMS.join(' < ')})`;
}
