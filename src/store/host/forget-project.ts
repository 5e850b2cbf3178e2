import { existsSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { TrellisError } from '../../events/index.js';
import { encodeProject } from '../trellis-home.js';
import { readCatalogForWrite, removeFromCatalog, type CatalogEntry } from './project-catalog.js';
import { mainCheckout } from './register.js';

/** A cataloged project named by its id (as the list shows it) or by a path inside it. */
export type ProjectRef = { readonly id: string } | { readonly path: string };

/** The catalog root a path names: its main checkout as registration normalized it, or the path itself. */
function rootOf(path: string): string {
  const abs = resolve(path);
  return existsSync(abs) ? (mainCheckout(abs) ?? realpathSync(abs)) : abs;
}

/**
 * Forgets a cataloged project: its catalog entry goes, its files are never touched. A project that is not
 * cataloged is NOT_FOUND; a malformed catalog refuses and is left as it is.
 */
export async function forgetProject(home: string, ref: ProjectRef): Promise<CatalogEntry & { readonly id: string }> {
  const entries = readCatalogForWrite(home);
  const root = 'path' in ref ? rootOf(ref.path) : undefined;
  const found = entries.find((e) => (root === undefined ? encodeProject(e.root) === (ref as { id: string }).id : e.root === root));
  if (!found) throw new TrellisError('NOT_FOUND', `no cataloged project ${'id' in ref ? ref.id : ref.path}`);
  await removeFromCatalog(home, found.root);
  return { ...found, id: encodeProject(found.root) };
}
