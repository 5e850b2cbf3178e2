import { createHash, randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { syncDir, syncFile } from './durable.js';
import { namingPath } from '../fs-errors.js';

/**
 * Writes git loose objects: `<type> <size>\0<content>`, sha1-named, zlib-deflated. Each goes to a temp
 * file named the way git names its own (`tmp_obj_*`, which `git fsck` ignores and `git gc` prunes),
 * fsynced, renamed into place and its folder fsynced, so a writer killed at any moment, or a power cut,
 * leaves either the whole object or no object.
 *
 * Written here rather than through isomorphic-git's writeBlob/writeTree/writeCommit: those write the
 * final path in place (a kill mid-write leaves a truncated object that later writes of the same content
 * skip), and loading isomorphic-git plus its first deflate costs ~85 ms of the 150 ms budget of
 * `trellis issue reply` (measured with --cpu-prof).
 */
export function writeObject(gitdir: string, type: 'blob' | 'tree' | 'commit', content: Buffer): string {
  const raw = Buffer.concat([Buffer.from(`${type} ${content.length}\0`, 'latin1'), content]);
  const oid = createHash('sha1').update(raw).digest('hex');
  const dir = join(gitdir, 'objects', oid.slice(0, 2));
  const path = join(dir, oid.slice(2));
  if (existsSync(path)) return oid;
  const tmp = join(dir, `tmp_obj_${randomBytes(6).toString('hex')}`);
  const bytes = deflateSync(raw);
  try {
    // `git prune-packed` (in a background gc) removes fan-out folders it emptied: one can vanish
    // between our mkdir and our write. Make it again and retry, as git's own object writer does.
    let madeDir = false;
    for (let attempt = 0; ; attempt++) {
      madeDir = mkdirSync(dir, { recursive: true }) !== undefined || madeDir;
      let fd: number | undefined;
      try {
        fd = openSync(tmp, 'wx', 0o444);
        writeFileSync(fd, bytes);
        // On the disk before the rename publishes it (see durable.ts): never a zero-length object.
        syncFile(fd);
        break;
      } catch (err) {
        if (attempt >= 10 || (err as NodeJS.ErrnoException).code !== 'ENOENT') throw namingPath(err, tmp);
      } finally {
        if (fd !== undefined) closeSync(fd);
      }
    }
    renameSync(tmp, path);
    syncDir(dir);
    if (madeDir) syncDir(join(gitdir, 'objects'));
  } finally {
    rmSync(tmp, { force: true });
  }
  return oid;
}

/** A tree of one file. */
export function singleFileTree(name: string, blob: string): Buffer {
  return Buffer.concat([Buffer.from(`100644 ${name}\0`, 'utf8'), Buffer.from(blob, 'hex')]);
}

export interface Signature {
  readonly name: string;
  readonly email: string;
  readonly at: Date;
}

/** A commit object's bytes; `parent` is one parent, none, or several (a merge). */
export function commitObject(tree: string, parent: string | null | readonly string[], who: Signature, message: string): Buffer {
  const parents = parent === null ? [] : typeof parent === 'string' ? [parent] : parent;
  // git idents cannot hold `<`, `>` or newlines; the payload keeps the author verbatim.
  const ident = (s: string) => s.replace(/[<>\n\r]/g, '').trim();
  const sig = `${ident(who.name) || 'unknown'} <${ident(who.email)}> ${Math.floor(who.at.getTime() / 1000)} +0000`;
  const lines = [`tree ${tree}`, ...parents.map((p) => `parent ${p}`), `author ${sig}`, `committer ${sig}`, '', message];
  return Buffer.from(`${lines.join('\n')}\n`, 'utf8');
}
