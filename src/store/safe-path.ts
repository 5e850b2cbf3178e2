import { realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';
import { isNodeId, TrellisError, type ErrorCode } from '../events/index.js';
import { isCode } from './fs-errors.js';

/*
 * Every path built from input goes through here. Two checks, in this order:
 *   1. at the edge, the input itself: a relative path of plain segments (no `..`, no `.`, no empty
 *      segment, no backslash, no NUL or control character), bounded in length;
 *   2. at the file system, the result: resolved with realpath (symlinks followed, the nearest existing
 *      ancestor for a path not there yet) it must stay at or below its root, itself resolved.
 * A path that fails either is refused as not found (or invalid), never read.
 */

/** Longest input accepted as one path below a root (git's own refs and most file systems allow 255 per segment). */
export const MAX_PATH_INPUT = 512;
const MAX_SEGMENT = 255;

/** Why `rel` cannot be a path below a root, or null when its shape is fine (nothing on disk is checked). */
export function unsafeRelativePath(rel: string): string | null {
  if (typeof rel !== 'string' || rel === '') return 'is empty';
  if (rel.length > MAX_PATH_INPUT) return `is longer than ${MAX_PATH_INPUT} characters`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f\\]/.test(rel)) return 'holds a control character or a backslash';
  if (isAbsolute(rel) || rel.startsWith('/')) return 'is absolute';
  for (const part of rel.split('/')) {
    if (part === '' || part === '.' || part === '..') return `has a '${part || '(empty)'}' segment`;
    if (part.length > MAX_SEGMENT) return `has a segment longer than ${MAX_SEGMENT} characters`;
  }
  return null;
}

/** Throws `code` (default INVALID_INPUT) naming `what` unless `rel` is a plain relative path. */
export function requireRelativePath(rel: string, what: string, code: ErrorCode = 'INVALID_INPUT'): string {
  const why = unsafeRelativePath(rel);
  if (why) throw new TrellisError(code, `${what} ${JSON.stringify(String(rel).slice(0, 80))} ${why}; it must be a path below its folder`);
  return rel;
}

/** A node id that may become a path below the spec root (`auth/login`), else INVALID_INPUT. */
export function requireNodeId(id: string): string {
  if (!isNodeId(id) || unsafeRelativePath(id)) throw new TrellisError('INVALID_INPUT', `${JSON.stringify(id.slice(0, 80))} is not a node id (a path below the spec root, without .md, e.g. auth/login)`);
  return id;
}

/** realpath of `path`, or of its nearest existing ancestor with the rest appended (for a path not there yet). */
export function resolveReal(path: string): string {
  const rest: string[] = [];
  let at = path;
  for (;;) {
    try {
      return join(realpathSync(at), ...rest.reverse());
    } catch (err) {
      if (!isCode(err, 'ENOENT') && !isCode(err, 'ENOTDIR')) throw err;
      const up = dirname(at);
      if (up === at) return path;
      rest.push(basename(at));
      at = up;
    }
  }
}

/** Whether `path`, symlinks resolved, is `root` or below it (root resolved too). */
export function isBelow(root: string, path: string): boolean {
  let r: string;
  let p: string;
  try {
    r = resolveReal(root);
    p = resolveReal(path);
  } catch {
    return false; // a symlink loop, a folder we may not read: nothing to serve from there
  }
  if (p === r) return true;
  const rel = relative(r, p);
  return rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel);
}

/**
 * `root/rel` when `rel` is a plain relative path and the result, symlinks resolved, stays below `root`;
 * otherwise null. The path returned is the unresolved join (what git and the caller expect to name).
 */
export function confinedPath(root: string, rel: string): string | null {
  if (unsafeRelativePath(rel)) return null;
  const path = join(root, rel);
  return isBelow(root, path) ? path : null;
}

/** `confinedPath`, or a `code` error (default NOT_FOUND) naming `what`: an escaping path reads as absent. */
export function requireConfined(root: string, rel: string, what: string, code: ErrorCode = 'NOT_FOUND'): string {
  const path = confinedPath(root, rel);
  if (path === null) throw new TrellisError(code, `no ${what} ${JSON.stringify(String(rel).slice(0, 80))} below ${root}`);
  return path;
}
