import { existsSync, lstatSync, readdirSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { TrellisError } from '../../events/index.js';
import { isCode } from '../fs-errors.js';

/** Linux's PATH_MAX: no longer path can be opened. */
const PATH_MAX = 4096;

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
  // Refused by name before the file system sees them: a NUL byte is no path at all (node throws a
  // TypeError), and nothing longer than PATH_MAX can be opened.
  if (path.includes('\0')) throw new TrellisError('INVALID_INPUT', 'path must not contain a NUL byte');
  if (Buffer.byteLength(path) > PATH_MAX) throw new TrellisError('INVALID_INPUT', `path is longer than ${PATH_MAX} bytes`);
  if (!isAbsolute(path)) throw new TrellisError('INVALID_INPUT', `path must be absolute, not ${JSON.stringify(path)}`);
  let names;
  try {
    if (!statSync(path).isDirectory()) throw new TrellisError('INVALID_INPUT', `${path} is not a directory`);
    names = readdirSync(path, { withFileTypes: true });
  } catch (err) {
    if (isCode(err, 'ENOENT') || isCode(err, 'ENOTDIR')) throw new TrellisError('NOT_FOUND', `no directory ${path}`);
    if (isCode(err, 'EACCES') || isCode(err, 'EPERM')) throw new TrellisError('INVALID_INPUT', `${path} cannot be read by this user`);
    if (isCode(err, 'ENAMETOOLONG')) throw new TrellisError('INVALID_INPUT', `${path.slice(0, 80)}…: a name in this path is too long`);
    if (isCode(err, 'ELOOP')) throw new TrellisError('INVALID_INPUT', `${path} loops through symbolic links`);
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
