/**
 * The repository's worktrees read from `$GIT_DIR` (HEAD and `worktrees/<id>/{gitdir,HEAD,locked}`) the way
 * `git worktree list --porcelain` reports them, without a git process (issue 40: `trellis board` spent one
 * git round trip on the list before any of its diffs could start). The common layout only: anything this
 * reader does not model (a steering variable, config includes or extensions, a relative gitdir, a damaged
 * HEAD, a symbolic ref it cannot follow) answers undefined, and the caller asks git, which stays the
 * authority. worktree-records.test.ts compares both on real repositories, edge cases included.
 */
import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { packedTip } from './refs.js';

/** One worktree as `git worktree list --porcelain` reports it. */
export interface WorktreeRecord {
  readonly path: string;
  /** The HEAD line's object id (all zeros on an unborn branch or an unreadable HEAD); null when bare. */
  readonly head: string | null;
  /** The branch line's ref (`refs/heads/…`), or null. */
  readonly branch: string | null;
  readonly detached: boolean;
  readonly bare: boolean;
  /** The locked line's reason as printed ('' for `locked` alone), or null when not locked. */
  readonly locked: string | null;
  /** The prunable line's reason, or null. */
  readonly prunable: string | null;
}

const ZERO = '0'.repeat(40);
/** Variables that change what git reads (where the repository is, or its config). */
const STEERING = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_COMMON_DIR', 'GIT_CONFIG_PARAMETERS', 'GIT_CONFIG_COUNT', 'GIT_OBJECT_DIRECTORY', 'GIT_NAMESPACE'];
/** git's own isspace (sane_ctype): space, tab, LF and CR only. */
const SPACE = /^[ \t\n\r]+|[ \t\n\r]+$/g;
const TRAILING_SPACE = /[ \t\n\r]+$/;
/** A branch name this reader follows without git's full check-ref-format (anything else: ask git). */
const PLAIN_REF = /^refs\/heads\/(?!.*(?:\.\.|\/\/|@\{|\/\.|\.lock(?:\/|$)|\/$|\.$))[^\x00-\x20\x7f~^:?*[\\]+$/;
const OID = /^[0-9a-fA-F]{40}(?:[ \t\n\r].*)?$/s;

class Unmodelled extends Error {}

/** The worktrees of the repository whose common git dir is `gitdir`, main first; undefined: ask git. */
export function readWorktreeRecords(gitdir: string, env: NodeJS.ProcessEnv = process.env): WorktreeRecord[] | undefined {
  if (STEERING.some((name) => env[name] !== undefined)) return undefined;
  try {
    const bare = coreBare(readFileSync(join(gitdir, 'config'), 'utf8'));
    const real = realpathSync(gitdir);
    const main: WorktreeRecord = { path: real.endsWith('/.git') ? real.slice(0, -5) : real, ...headOf(gitdir, join(gitdir, 'HEAD'), bare), locked: null, prunable: null };
    const linked: WorktreeRecord[] = [];
    let ids: string[];
    try {
      ids = readdirSync(join(gitdir, 'worktrees'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Unmodelled();
      ids = [];
    }
    for (const id of ids) {
      const record = linkedRecord(gitdir, id);
      if (record) linked.push(record);
    }
    // `git worktree list` sorts the linked ones by path, byte by byte (core.ignorecase is refused above).
    linked.sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
    return [main, ...linked];
  } catch {
    return undefined;
  }
}

/** core.bare from the repository's config; throws Unmodelled for config this reader cannot judge. */
function coreBare(config: string): boolean {
  let section = '';
  let bare = false;
  for (const raw of config.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    const head = /^\[([^\]]*)\](.*)$/.exec(line);
    if (head) {
      section = head[1]!.trim().toLowerCase();
      // Includes may set anything; extensions change the ref store, the hash or the paths' form.
      if (section.startsWith('include') || section === 'extensions' || head[2]!.trim()) throw new Unmodelled();
      continue;
    }
    if (section !== 'core') continue;
    const kv = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(line);
    if (!kv) throw new Unmodelled();
    const key = kv[1]!.toLowerCase();
    const value = kv[2] === undefined ? 'true' : kv[2].replace(/\s*[#;].*$/, '').toLowerCase();
    if (key === 'ignorecase' && value !== 'false') throw new Unmodelled();
    if (key !== 'bare') continue;
    if (['true', 'yes', 'on', '1'].includes(value)) bare = true;
    else if (['false', 'no', 'off', '0'].includes(value)) bare = false;
    else throw new Unmodelled();
  }
  return bare;
}

/** worktrees/<id> as git lists it, or null where git skips it (no readable, non-empty gitdir file). */
function linkedRecord(gitdir: string, id: string): WorktreeRecord | null {
  const admin = join(gitdir, 'worktrees', id);
  let pointer: string;
  try {
    pointer = readFileSync(join(admin, 'gitdir'), 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw new Unmodelled();
  }
  if (!pointer) return null;
  const trimmed = pointer.replace(TRAILING_SPACE, '');
  // A relative gitdir (newer git's relative worktrees) is resolved by rules this reader leaves to git.
  if (trimmed && !isAbsolute(trimmed)) throw new Unmodelled();
  const path = trimmed.endsWith('/.git') ? trimmed.slice(0, -5) : trimmed;
  const locked = lockReason(admin);
  return { path, ...headOf(gitdir, join(admin, 'HEAD'), false), locked, prunable: locked === null ? pruneReason(pointer) : null };
}

/** The locked line: the `locked` file's text, trimmed and C-quoted when it needs to be, or null. */
function lockReason(admin: string): string | null {
  let text: string;
  try {
    text = readFileSync(join(admin, 'locked'), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Unmodelled();
  }
  return quoted(text.replace(SPACE, ''));
}

/** Why `git worktree prune` would remove it (the gitdir file read as should_prune_worktree reads it), or null. */
function pruneReason(pointer: string): string | null {
  const path = pointer.replace(/[\r\n]+$/, '');
  if (!path) return 'invalid gitdir file';
  try {
    statSync(path);
    return null;
  } catch {
    return 'gitdir file points to non-existent location';
  }
}

/** The HEAD and branch lines of a worktree whose HEAD file is `file`. */
function headOf(gitdir: string, file: string, bare: boolean, symbolic?: string): Pick<WorktreeRecord, 'head' | 'branch' | 'detached' | 'bare'> {
  if (bare) return { head: null, branch: null, detached: false, bare: true };
  const none = { head: ZERO, branch: null, detached: false, bare: false };
  // `symbolic`: resolve that ref as if a HEAD file pointed to it.
  const first = symbolic === undefined ? readRef(file) : { target: symbolic };
  if (first === undefined) return none;
  if (first.oid) return { head: first.oid, branch: null, detached: true, bare: false };
  // A symbolic HEAD: follow it through loose refs and packed-refs, as git resolves it (at most 5 levels).
  let target = first.target!;
  for (let depth = 0; depth < 5; depth++) {
    if (!PLAIN_REF.test(target)) throw new Unmodelled();
    const loose = readRef(join(gitdir, target));
    if (loose === undefined) {
      const packed = packedTip(gitdir, Buffer.from(target, 'utf8').toString('latin1'));
      return { head: packed ?? ZERO, branch: target, detached: false, bare: false };
    }
    if (loose.oid) return { head: loose.oid, branch: target, detached: false, bare: false };
    target = loose.target!;
  }
  throw new Unmodelled();
}

/** A ref file: its object id, or the ref it points to; undefined when absent. */
function readRef(file: string): { oid?: string; target?: string } | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR') return undefined;
    throw new Unmodelled();
  }
  if (text.startsWith('ref:')) return { target: text.slice(4).replace(SPACE, '') };
  if (OID.test(text)) return { oid: text.slice(0, 40).toLowerCase() };
  throw new Unmodelled();
}

const ESCAPES: Record<number, string> = { 7: 'a', 8: 'b', 9: 't', 10: 'n', 11: 'v', 12: 'f', 13: 'r', 34: '"', 92: '\\' };

/** git's quote_c_style with core.quotePath on: as is, unless a byte needs quoting. */
function quoted(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  const needs = (b: number) => b < 0x20 || b === 0x22 || b === 0x5c || b >= 0x7f;
  if (!bytes.some(needs)) return text;
  let out = '"';
  for (const b of bytes) {
    if (!needs(b)) out += String.fromCharCode(b);
    else out += `\\${ESCAPES[b] ?? b.toString(8).padStart(3, '0')}`;
  }
  return `${out}"`;
}

/** `git worktree list --porcelain`'s output parsed into records (what the reader above is checked against). */
export function parsePorcelain(out: string): WorktreeRecord[] {
  return out
    .split('\n\n')
    .filter((b) => b.trim())
    .map((block) => {
      const lines = block.split('\n');
      const field = (key: string) => {
        const line = lines.find((l) => l === key || l.startsWith(`${key} `));
        return line === undefined ? undefined : line.slice(key.length + 1);
      };
      return {
        path: field('worktree')!,
        head: field('HEAD') ?? null,
        branch: field('branch') ?? null,
        detached: field('detached') !== undefined,
        bare: field('bare') !== undefined,
        locked: field('locked') ?? null,
        prunable: field('prunable') ?? null,
      };
    });
}

/** The tip of branch `name` (loose or packed, a symbolic branch followed), or null when unknown or absent. */
export function branchTip(gitdir: string, name: string): string | null {
  try {
    const tip = headOf(gitdir, '', false, `refs/heads/${name}`).head;
    return tip === ZERO ? null : tip;
  } catch {
    return null;
  }
}
