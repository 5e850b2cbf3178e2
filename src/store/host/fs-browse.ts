import { existsSync, lstatSync, readdirSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { TrellisError } from '../../events/index.js';
import { isCode } from '../git/refs.js';

export interface FolderEntry {
  readonly name: string;
  readonly path: string;
  /** A symlink is reported as such, with its target, and never followed or inspected. */
  readonly symlink?: string;
  readonly git?: boolean;
  readonly trellis?: boolean;
}

export interface Listing {
  readonly path: string;
  readonly parent: string | null;
  readonly folders: readonly FolderEntry[];
}

/**
 * The read-only directory browser behind GET /fs: the sub-folders of `path`, marking git repositories
 * and Trellis projects. It reads names and a few markers, never any file's contents.
 */
export function browse(path: string): Listing {
  if (!isAbsolute(path)) throw new TrellisError('INVALID_INPUT', `path must be absolute, not ${JSON.stringify(path)}`);
  let names;
  try {
    if (!statSync(path).isDirectory()) throw new TrellisError('INVALID_INPUT', `${path} is not a directory`);
    names = readdirSync(path, { withFileTypes: true });
  } catch (err) {
    if (isCode(err, 'ENOENT') || isCode(err, 'ENOTDIR')) throw new TrellisError('NOT_FOUND', `no directory ${path}`);
    if (isCode(err, 'EACCES') || isCode(err, 'EPERM')) throw new TrellisError('INVALID_INPUT', `${path} cannot be read by this user`);
    throw err;
  }
  const real = realpathSync(path);
  const folders = names.flatMap((e): FolderEntry[] => {
    const full = join(real, e.name);
    if (e.isSymbolicLink()) {
      let target: string;
      try {
        target = readlinkSync(full);
      } catch {
        return [];
      }
      return [{ name: e.name, path: full, symlink: target }];
    }
    if (!e.isDirectory()) return [];
    const git = existsSync(join(full, '.git'));
    const trellis = git && lstatIsFile(join(full, 'trellis.json'));
    return [{ name: e.name, path: full, ...(git ? { git } : {}), ...(trellis ? { trellis } : {}) }];
  });
  folders.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { path: real, parent: real === '/' ? null : dirname(real), folders };
}

function lstatIsFile(p: string): boolean {
  try {
    return lstatSync(p).isFile();
  } catch {
    return false;
  }
}
