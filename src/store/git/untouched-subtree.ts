/**
 * Whether a worktree left a folder untouched since its HEAD, read from its index and the disk without a
 * git process (issue 40: `trellis board` ran `git diff --name-status <HEAD> -- specs` and `git ls-files
 * --others --exclude-standard -- specs` for each worktree still at trunk's tip, two processes that found
 * nothing nearly every time). The answer is `true` only when git would list nothing for either:
 *
 * - the index is HEAD's tree: its cache tree (the TREE extension, which git keeps after a checkout,
 *   commit or reset) names a valid root whose id is the tree HEAD's commit names;
 * - every index entry below the folder is stat-clean: the file's lstat matches what the index recorded
 *   (mode, size, mtime and ctime to the nanosecond, inode, owner), and the file is older than the index
 *   (else git would judge it "racily clean" by its content);
 * - every file on disk below the folder is in the index (no untracked file, ignored or not).
 *
 * Anything else, and anything this reader does not model (an index version other than 2 or 3, a split or
 * sparse index, extended flags, a conflict, a submodule, a commit packed as a delta or found in no pack,
 * a steering variable, a pathspec git would read as a pattern) answers undefined: the caller asks git,
 * which stays the authority. untouched-subtree.test.ts compares both on real repositories.
 */
import { closeSync, lstatSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { inflateSync } from 'node:zlib';

/** Variables that change which index, objects or worktree git reads. */
const STEERING = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_COMMON_DIR', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_NAMESPACE', 'GIT_CONFIG_PARAMETERS', 'GIT_CONFIG_COUNT'];
const HEX40 = /^[0-9a-f]{40}$/;
/** A commit larger than this (or one whose inflated bytes would be) is git's to read: a hostile clone's pack may claim gigabytes. */
const MAX_COMMIT = 1 << 20;

class Unmodelled extends Error {}

/**
 * True when `git diff <head> -- <folder>` and `git ls-files --others --exclude-standard -- <folder>`, run
 * in the linked worktree at `worktree` whose HEAD is `head`, would both print nothing; undefined when this
 * reader cannot tell (ask git). `gitdir` is the repository's common git dir (where the objects are).
 */
export function untouchedSince(worktree: string, gitdir: string, head: string, folder: string, env: NodeJS.ProcessEnv = process.env): true | undefined {
  if (STEERING.some((name) => env[name] !== undefined)) return undefined;
  // A plain relative folder: anything git would read as pathspec magic or a pattern is git's to judge.
  if (!HEX40.test(head) || !folder || folder === '.' || isAbsolute(folder) || /[*?[\\:]|^\.\.?\/|\/\.\.?(?:\/|$)|\/\/|\/$/.test(folder)) return undefined;
  try {
    const admin = adminDir(worktree);
    const indexPath = join(admin, 'index');
    const indexStat = statSync(indexPath, { bigint: true });
    const index = parseIndex(readFileSync(indexPath), `${folder}/`);
    if (!index.rootTree || index.rootTree !== commitTree(gitdir, head)) return undefined;
    for (const entry of index.below) if (!statClean(join(worktree, entry.path), entry, indexStat.mtimeNs)) return undefined;
    const tracked = new Set(index.below.map((e) => e.path));
    if (!onlyTracked(worktree, folder, tracked)) return undefined;
    return true;
  } catch {
    return undefined;
  }
}

/** The linked worktree's admin folder, from its `.git` file (`gitdir: <absolute path>`). */
function adminDir(worktree: string): string {
  const text = readFileSync(join(worktree, '.git'), 'utf8');
  const m = /^gitdir: (.+?)\r?\n?$/.exec(text);
  if (!m || !isAbsolute(m[1]!)) throw new Unmodelled();
  return m[1]!;
}

interface IndexEntry {
  readonly path: string;
  readonly ctimeS: number;
  readonly ctimeNs: number;
  readonly mtimeS: number;
  readonly mtimeNs: number;
  readonly ino: number;
  readonly mode: number;
  readonly uid: number;
  readonly gid: number;
  readonly size: number;
}

/** An index (version 2 or 3): its entries below `prefix`, and its cache tree's root id when valid. */
function parseIndex(buf: Buffer, prefix: string): { below: IndexEntry[]; rootTree: string | null } {
  if (buf.toString('latin1', 0, 4) !== 'DIRC') throw new Unmodelled();
  const version = buf.readUInt32BE(4);
  if (version !== 2 && version !== 3) throw new Unmodelled();
  const count = buf.readUInt32BE(8);
  const end = buf.length - 20;
  const below: IndexEntry[] = [];
  let at = 12;
  for (let i = 0; i < count; i++) {
    const flags = buf.readUInt16BE(at + 60);
    const extended = (flags & 0x4000) !== 0;
    const start = at + 62 + (extended ? 2 : 0);
    const nameLength = flags & 0xfff;
    const nul = buf.indexOf(0, nameLength === 0xfff ? start : start + nameLength);
    if (nul < 0 || nul > end) throw new Unmodelled();
    const path = buf.toString('utf8', start, nul);
    if (path.startsWith(prefix)) {
      // A conflict, a skip-worktree or intent-to-add entry, assume-unchanged: git's rules, not ours.
      if (extended || (flags & 0xb000) !== 0) throw new Unmodelled();
      const mode = buf.readUInt32BE(at + 24);
      if (mode !== 0o100644 && mode !== 0o100755 && mode !== 0o120000) throw new Unmodelled();
      below.push({
        path,
        ctimeS: buf.readUInt32BE(at),
        ctimeNs: buf.readUInt32BE(at + 4),
        mtimeS: buf.readUInt32BE(at + 8),
        mtimeNs: buf.readUInt32BE(at + 12),
        ino: buf.readUInt32BE(at + 20),
        mode,
        uid: buf.readUInt32BE(at + 28),
        gid: buf.readUInt32BE(at + 32),
        size: buf.readUInt32BE(at + 36),
      });
    }
    // Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
    at += (start - at + (nul - start) + 8) & ~7;
  }
  let rootTree: string | null = null;
  while (at + 8 <= end) {
    const signature = buf.toString('latin1', at, at + 4);
    const size = buf.readUInt32BE(at + 4);
    const data = buf.subarray(at + 8, at + 8 + size);
    // A split index (`link`), a sparse one (`sdir`) or any other required (lower-case) extension: git's.
    if (!/^[A-Z]/.test(signature) || signature === 'sdir') throw new Unmodelled();
    if (signature === 'TREE') rootTree = cacheTreeRoot(data);
    at += 8 + size;
  }
  return { below, rootTree };
}

/** The cache tree's first record (the root, path ''): its tree id, or null when invalidated (-1 entries). */
function cacheTreeRoot(data: Buffer): string | null {
  const nul = data.indexOf(0);
  const newline = data.indexOf(10, nul);
  if (nul !== 0 || newline < 0) return null;
  const [entries] = data.toString('latin1', 1, newline).split(' ');
  if (Number(entries) < 0) return null;
  return data.toString('hex', newline + 1, newline + 21);
}

/** Whether a tracked file's lstat is what the index recorded, and older than the index (not racy). */
function statClean(file: string, e: IndexEntry, indexMtimeNs: bigint): boolean {
  let s;
  try {
    s = lstatSync(file, { bigint: true });
  } catch {
    return false;
  }
  const kind = s.isSymbolicLink() ? 0o120000 : s.isFile() ? ((s.mode & 0o100n) !== 0n ? 0o100755 : 0o100644) : -1;
  const u32 = (n: bigint) => Number(n & 0xffffffffn);
  const sec = (ns: bigint) => u32(ns / 1_000_000_000n);
  const nsec = (ns: bigint) => Number(ns % 1_000_000_000n);
  return (
    kind === e.mode &&
    u32(s.size) === e.size &&
    sec(s.mtimeNs) === e.mtimeS &&
    nsec(s.mtimeNs) === e.mtimeNs &&
    sec(s.ctimeNs) === e.ctimeS &&
    nsec(s.ctimeNs) === e.ctimeNs &&
    u32(s.ino) === e.ino &&
    u32(s.uid) === e.uid &&
    u32(s.gid) === e.gid &&
    s.mtimeNs < indexMtimeNs
  );
}

/** Whether every file below `folder` on disk is tracked (an absent folder holds none). */
function onlyTracked(worktree: string, folder: string, tracked: ReadonlySet<string>): boolean {
  let names: string[];
  try {
    names = readdirSync(join(worktree, folder), { recursive: true, encoding: 'utf8' });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return true;
    throw new Unmodelled();
  }
  for (const name of names) {
    if (tracked.has(`${folder}/${name}`)) continue;
    if (!lstatSync(join(worktree, folder, name)).isDirectory()) return false;
  }
  return true;
}

/** The tree id a commit names, read loose or from a pack (undeltified); anything else throws. */
function commitTree(gitdir: string, oid: string): string {
  const body = readObject(gitdir, oid);
  const text = body.toString('latin1', 0, 64);
  const m = /^tree ([0-9a-f]{40})\n/.exec(text);
  if (!m) throw new Unmodelled();
  return m[1]!;
}

function readObject(gitdir: string, oid: string): Buffer {
  const objects = join(gitdir, 'objects');
  try {
    const raw = inflateSync(readFileSync(join(objects, oid.slice(0, 2), oid.slice(2))), { maxOutputLength: MAX_COMMIT });
    const nul = raw.indexOf(0);
    if (!raw.toString('latin1', 0, nul).startsWith('commit ')) throw new Unmodelled();
    return raw.subarray(nul + 1);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Unmodelled();
  }
  const packs = join(objects, 'pack');
  for (const name of readdirSync(packs)) {
    if (!name.endsWith('.idx')) continue;
    const offset = packOffset(join(packs, name), oid);
    if (offset !== null) return packedCommit(join(packs, `${name.slice(0, -4)}.pack`), offset);
  }
  throw new Unmodelled();
}

/** Where a pack index (version 2) puts `oid` in its pack, or null when it does not hold it. */
function packOffset(idx: string, oid: string): number | null {
  const fd = openSync(idx, 'r');
  try {
    const read = (at: number, length: number) => {
      const b = Buffer.alloc(length);
      if (readSync(fd, b, 0, length, at) !== length) throw new Unmodelled();
      return b;
    };
    const header = read(0, 8 + 256 * 4);
    if (header.readUInt32BE(0) !== 0xff744f63 || header.readUInt32BE(4) !== 2) throw new Unmodelled();
    const key = Buffer.from(oid, 'hex');
    const first = key[0]!;
    let lo = first === 0 ? 0 : header.readUInt32BE(8 + (first - 1) * 4);
    let hi = header.readUInt32BE(8 + first * 4);
    const total = header.readUInt32BE(8 + 255 * 4);
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = Buffer.compare(read(8 + 1024 + mid * 20, 20), key);
      if (c === 0) {
        const small = read(8 + 1024 + total * 24 + mid * 4, 4).readUInt32BE(0);
        if ((small & 0x80000000) === 0) return small;
        const large = read(8 + 1024 + total * 28 + (small & 0x7fffffff) * 8, 8).readBigUInt64BE(0);
        if (large > BigInt(Number.MAX_SAFE_INTEGER)) throw new Unmodelled();
        return Number(large);
      }
      if (c < 0) lo = mid + 1;
      else hi = mid;
    }
    return null;
  } finally {
    closeSync(fd);
  }
}

/** A commit stored whole in a pack at `offset` (a delta is git's to resolve). */
function packedCommit(pack: string, offset: number): Buffer {
  const fd = openSync(pack, 'r');
  try {
    const head = Buffer.alloc(16);
    const got = readSync(fd, head, 0, 16, offset);
    let c = head[0]!;
    if (((c >> 4) & 7) !== 1) throw new Unmodelled();
    let size = c & 15;
    let shift = 4;
    let at = 1;
    while (c & 0x80) {
      if (at >= got || shift > 42) throw new Unmodelled();
      c = head[at++]!;
      size += (c & 0x7f) * 2 ** shift;
      shift += 7;
    }
    if (size > MAX_COMMIT) throw new Unmodelled();
    // The deflated body is never much longer than the body itself (zlib's stored blocks add 5 bytes per 16 kB).
    const body = Buffer.alloc(size + 64 + Math.ceil(size / 16384) * 5);
    const n = readSync(fd, body, 0, body.length, offset + at);
    const inflated = inflateSync(body.subarray(0, n), { maxOutputLength: MAX_COMMIT });
    if (inflated.length !== size) throw new Unmodelled();
    return inflated;
  } finally {
    closeSync(fd);
  }
}
