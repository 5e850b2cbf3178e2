import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeAtomic } from '../write-atomic.js';
import { TrellisError } from '../../events/index.js';
import { isCode } from '../fs-errors.js';
import { serially } from './write-queue.js';

/**
 * The host's project catalog, `$TRELLIS_HOME/projects.json`: `{version, projects: [{root, addedAt}]}`.
 * Written only by registration and forgetting. An unparsable file is reported loudly and never
 * rewritten: reads carry its error, writes are refused.
 *
 * Catalog format versions (`version`):
 *   1 — initial: { version, projects: [{ root, addedAt }] }.
 */
export const CATALOG_VERSION = 1;

export interface CatalogEntry {
  readonly root: string;
  readonly addedAt: string;
}

export type CatalogRead = { readonly entries: readonly CatalogEntry[]; readonly error?: string };

export const catalogPath = (home: string): string => join(home, 'projects.json');

/** The catalog's entries; a malformed file reads as no entries plus its error. */
export function readCatalog(home: string): CatalogRead {
  const path = catalogPath(home);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if (isCode(err, 'ENOENT')) return { entries: [] };
    return { entries: [], error: `${path} cannot be read (${(err as Error).message})` };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { entries: [], error: `${path} is not valid JSON (${(err as Error).message}); fix or remove it (nothing rewrites it meanwhile)` };
  }
  const r = raw as { version?: unknown; projects?: unknown };
  if (typeof raw !== 'object' || raw === null || r.version !== CATALOG_VERSION || !Array.isArray(r.projects)) {
    return { entries: [], error: `${path} is not a project catalog of version ${CATALOG_VERSION} ({version, projects: [{root, addedAt}]}); fix or remove it` };
  }
  const entries = r.projects.filter(
    (p): p is CatalogEntry => typeof p === 'object' && p !== null && typeof (p as CatalogEntry).root === 'string' && typeof (p as CatalogEntry).addedAt === 'string',
  );
  if (entries.length !== r.projects.length) return { entries, error: `${path} holds entries that are not {root, addedAt}; fix or remove them` };
  return { entries };
}

/** Raised when a write meets a malformed catalog: the file is left exactly as it is. */
export class CatalogBrokenError extends TrellisError {
  constructor(message: string) {
    super('CATALOG_MALFORMED', message);
  }
}

/** The catalog's entries for a write to start from; a malformed catalog refuses before anything runs. */
export function readCatalogForWrite(home: string): readonly CatalogEntry[] {
  const read = readCatalog(home);
  if (read.error) throw new CatalogBrokenError(read.error);
  return read.entries;
}

async function rewrite(home: string, change: (entries: CatalogEntry[]) => CatalogEntry[] | null): Promise<boolean> {
  // Catalog read-modify-writes one at a time in this process (write-queue.ts).
  return serially(catalogPath(home), async () => {
    const next = change([...readCatalogForWrite(home)]);
    if (!next) return false;
    mkdirSync(home, { recursive: true });
    await writeAtomic(catalogPath(home), `${JSON.stringify({ version: CATALOG_VERSION, projects: next }, null, 2)}\n`);
    return true;
  });
}

/** Adds `root` (already normalized) unless present; true when it was added. */
export function addToCatalog(home: string, root: string, now: Date): Promise<boolean> {
  return rewrite(home, (entries) => (entries.some((e) => e.root === root) ? null : [...entries, { root, addedAt: now.toISOString() }]));
}

/** Forgets `root`; true when it was cataloged. Never touches the project's files. */
export function removeFromCatalog(home: string, root: string): Promise<boolean> {
  return rewrite(home, (entries) => {
    const kept = entries.filter((e) => e.root !== root);
    return kept.length === entries.length ? null : kept;
  });
}
