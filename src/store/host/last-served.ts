import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { LAST_ROOT_FILE } from './endpoint-record.js';
import { encodeProject } from '../trellis-home.js';
import type { KnownProject } from './project-list.js';

/*
 * Where a project that was only being served lives, remembered after its serve stops: `<slot>/root`, beside
 * the endpoint record, written with it (endpoint-record.ts) and never removed. It does NOT list the project (the host list shows
 * a record-claimed project only while its record exists, spec §2.3, and the catalog is written only by a
 * registration); it lets that project's offline page offer to start it again or register it, by id.
 */

/** A slot name as encodeProject makes it: the folder's name, then 12 hex digits of its path's hash. */
const SLOT = /^[a-z0-9._-]{1,40}-[0-9a-f]{12}$/;

/** The project `id` was served from, if it was served on this host and its folder is still there. */
export function lastServed(home: string, id: string): KnownProject | null {
  if (!SLOT.test(id)) return null;
  let root: string;
  try {
    root = readFileSync(join(home, 'projects', id, LAST_ROOT_FILE), 'utf8').trim();
    if (!statSync(root).isDirectory()) return null;
  } catch {
    return null;
  }
  // The file names the folder whose slot it sits in, or nothing (a moved or hand-edited note is ignored).
  return encodeProject(root) === id ? { id, root, cataloged: false } : null;
}
