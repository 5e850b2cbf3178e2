import { crypto } from '../lazy-builtins.js';
import { closeSync, existsSync, mkdirSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { syncDir, syncFile } from './durable.js';
import { namingPath } from '../fs-errors.js';

/** A loose object to write: its type and content. */
export interface LooseObject {
  readonly type: 'blob' | 'tree' | 'commit';
  readonly content: Buffer;
}

/** The bytes git hashes for an object (`<type> <size>\0<content>`), and its id. */
function framed(o: LooseObject): { raw: Buffer; oid: string } {
  const raw = Buffer.concat([Buffer.from(`${o.type} ${o.content.length}\0`, 'latin1'), o.content]);
  return { raw, oid: crypto().createHash('sha1').update(raw).digest('hex') };
}

/** An object's id, without writing it (a commit of several objects names each before any is written). */
export const objectId = (o: LooseObject): string => framed(o).oid;

/**
 * Writes git loose objects: `<type> <size>\0<content>`, sha1-named, zlib-deflated. Each goes to a temp
 * file named the way git names its own (`tmp_obj_*`, which `git fsck` ignores and `git gc` prunes),
 * fsynced, renamed into place and its folder fsynced, so a writer killed at any moment, or a power cut,
 * leaves either the whole object or no object.
 *
 * In a batch (one append's objects: blob, tree and commit per record): every temp file is written, then
 * each fsynced, then all renamed, then each folder fsynced once: the same guarantee as one object at a
 * time (each file on the disk before its rename, each rename on the disk before the ref that names it
 * moves), for less CPU (one hook event with its usage, six objects: 0.79-0.91 of the CPU one at a time,
 * side by side in six runs on ext4). A fan-out folder is made only when the open says it is missing.
 *
 * Written here rather than through isomorphic-git's writeBlob/writeTree/writeCommit: those write the
 * final path in place (a kill mid-write leaves a truncated object that later writes of the same content
 * skip), and loading isomorphic-git plus its first deflate costs ~85 ms of the 150 ms budget of
 * `trellis issue reply` (measured with --cpu-prof).
 */
export function writeObjects(gitdir: string, objects: readonly LooseObject[]): string[] {
  const oids: string[] = [];
  const todo: { raw: Buffer; dir: string; path: string; tmp: string }[] = [];
  for (const o of objects) {
    const { raw, oid } = framed(o);
    oids.push(oid);
    const dir = join(gitdir, 'objects', oid.slice(0, 2));
    const path = join(dir, oid.slice(2));
    if (existsSync(path) || todo.some((t) => t.path === path)) continue;
    todo.push({ raw, dir, path, tmp: join(dir, `tmp_obj_${crypto().randomBytes(6).toString('hex')}`) });
  }
  const fds: number[] = [];
  const madeDirs = new Set<string>();
  try {
    for (const t of todo) {
      // `git prune-packed` (in a background gc) removes fan-out folders it emptied: one can vanish
      // between our mkdir and our write. Make it again and retry, as git's own object writer does.
      for (let attempt = 0; ; attempt++) {
        try {
          fds.push(openSync(t.tmp, 'wx', 0o444));
          break;
        } catch (err) {
          if (attempt >= 10 || (err as NodeJS.ErrnoException).code !== 'ENOENT') throw namingPath(err, t.tmp);
          if (mkdirSync(t.dir, { recursive: true }) !== undefined) madeDirs.add(t.dir);
        }
      }
      // Written through its descriptor, an error names no file: name it (a full disk is refused naming it).
      try {
        writeFileSync(fds[fds.length - 1]!, deflateSync(t.raw));
      } catch (err) {
        throw namingPath(err, t.tmp);
      }
    }
    // On the disk before the rename publishes it (see durable.ts): never a zero-length object.
    fds.forEach((fd, i) => {
      try {
        syncFile(fd);
      } catch (err) {
        throw namingPath(err, todo[i]!.tmp);
      }
    });
  } catch (err) {
    for (const t of todo) rmSync(t.tmp, { force: true });
    throw err;
  } finally {
    for (const fd of fds.splice(0)) closeSync(fd);
  }
  try {
    for (const t of todo) renameSync(t.tmp, t.path);
  } finally {
    for (const t of todo) rmSync(t.tmp, { force: true });
  }
  for (const dir of new Set(todo.map((t) => t.dir))) syncDir(dir);
  if (madeDirs.size) syncDir(join(gitdir, 'objects'));
  return oids;
}

/** One loose object (see writeObjects). */
export function writeObject(gitdir: string, type: LooseObject['type'], content: Buffer): string {
  return writeObjects(gitdir, [{ type, content }])[0]!;
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
