import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, createWriteStream, lstatSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { once } from 'node:events';
import { TrellisError } from '../../events/index.js';
import { CONFIG_FILE, LOCAL_CONFIG_FILE, readConfigFile } from '../project/config.js';

/** Default size limit of one pasted file (`uploads.maxBytes` in trellis.json overrides it). */
export const DEFAULT_UPLOAD_MAX_BYTES = 25 << 20;
/** Longest stored file name, in bytes. */
const MAX_NAME_BYTES = 200;

/**
 * Where pasted files go on the worker machine: a folder of this user's own in the temporary folder,
 * `/tmp/trellis-uploads-<uid>` (0700), or TRELLIS_UPLOADS_DIR. Never one fixed path in a shared /tmp,
 * where another user could make it first.
 */
export const uploadsDir = (env: NodeJS.ProcessEnv = process.env): string => env.TRELLIS_UPLOADS_DIR || join(tmpdir(), `trellis-uploads-${userInfo().uid}`);

/**
 * Makes `dir` (0700) or checks the one that is there: a real folder (a symlink is refused, never
 * followed), this user's own, open to nobody else (a wider mode of our own folder is narrowed).
 */
function ownFolder(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  const unsafe = (why: string) => new TrellisError('UNSAFE_FOLDER', `the uploads folder ${dir} ${why}; nothing was stored. Remove it (or set TRELLIS_UPLOADS_DIR to a folder of your own)`);
  if (st.isSymbolicLink()) throw unsafe('is a symlink');
  if (!st.isDirectory()) throw unsafe('is not a folder');
  if (process.getuid && st.uid !== process.getuid()) throw unsafe(`belongs to another user (uid ${st.uid})`);
  if ((st.mode & 0o077) !== 0) chmodSync(dir, 0o700);
}

/** The uploads folder, made (or checked) as storeUpload makes it: a confined session mounts it read-only, so a pasted file's typed path opens. */
export function ensureUploadsDir(env: NodeJS.ProcessEnv = process.env): string {
  const dir = uploadsDir(env);
  ownFolder(dir);
  return dir;
}

/** `uploads.maxBytes` from trellis.json (trellis.local.json wins), else 25 MB; a bad value is a clear error. */
export function uploadLimit(root: string | null): number {
  if (!root) return DEFAULT_UPLOAD_MAX_BYTES;
  const merged = { ...(readConfigFile(join(root, CONFIG_FILE)) ?? {}), ...(readConfigFile(join(root, LOCAL_CONFIG_FILE)) ?? {}) };
  const uploads = merged.uploads as { maxBytes?: unknown } | undefined;
  const v = uploads?.maxBytes;
  if (v === undefined) return DEFAULT_UPLOAD_MAX_BYTES;
  if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) throw new TrellisError('INVALID_INPUT', `${CONFIG_FILE}: "uploads.maxBytes" must be a positive whole number of bytes`);
  return v;
}

/**
 * A client's file name made safe to store, or a 400: a name that carries a path (`/`, `\`, `..`) or a
 * NUL is refused, never cleaned into something else; control characters become `_`; long names are cut.
 */
export function sanitizeUploadName(name: string): string {
  if (name.includes('\u0000')) throw new TrellisError('INVALID_INPUT', 'the file name contains a NUL byte');
  if (name.includes('/') || name.includes('\\') || name.includes('..')) throw new TrellisError('INVALID_INPUT', `the file name ${JSON.stringify(name)} carries a path; send a bare name`);
  // eslint-disable-next-line no-control-regex
  let clean = name.replace(/[\u0000-\u001f\u007f]/g, '_').trim();
  if (clean === '' || clean === '.') throw new TrellisError('INVALID_INPUT', 'the upload needs a file name (X-Filename, or the multipart part’s filename)');
  while (Buffer.byteLength(clean) > MAX_NAME_BYTES) clean = clean.slice(0, -1);
  return clean;
}

/** The one confinement check: `name` below `root`, or a 400. (Swappable for the shared path helper.) */
export function confinedPath(root: string, ...parts: string[]): string {
  const base = resolve(root);
  const full = resolve(base, ...parts);
  if (!full.startsWith(base + sep)) throw new TrellisError('INVALID_INPUT', `${parts.join('/')} would land outside ${base}`);
  return full;
}

export interface Upload {
  readonly path: string;
  readonly size: number;
  readonly hash: string;
}

/**
 * Stores one pasted file at `<dir>/<sha256>/<name>`, streaming: bytes are hashed and counted as they
 * arrive, and past `maxBytes` the write stops with a 413 and the partial file is removed.
 */
export async function storeUpload(source: AsyncIterable<Uint8Array>, rawName: string, opts: { maxBytes: number; dir?: string }): Promise<Upload> {
  const name = sanitizeUploadName(rawName);
  const dir = opts.dir ?? uploadsDir();
  ownFolder(dir);
  const tmp = confinedPath(dir, `.incoming-${randomBytes(8).toString('hex')}`);
  const file = createWriteStream(tmp, { mode: 0o600 });
  const hash = createHash('sha256');
  let size = 0;
  try {
    for await (const chunk of source) {
      size += chunk.length;
      if (size > opts.maxBytes) throw new TrellisError('PAYLOAD_TOO_LARGE', `uploads are limited to ${opts.maxBytes} bytes (uploads.maxBytes in trellis.json)`);
      hash.update(chunk);
      if (!file.write(chunk)) await once(file, 'drain');
    }
    if (size === 0) throw new TrellisError('INVALID_INPUT', 'the upload is empty: send the file’s bytes as the body');
    file.end();
    await once(file, 'finish');
    const digest = hash.digest('hex');
    const folder = confinedPath(dir, digest);
    ownFolder(folder);
    const path = confinedPath(folder, name);
    renameSync(tmp, path);
    return { path, size: statSync(path).size, hash: digest };
  } catch (err) {
    // Writes still queued fail with ERR_STREAM_DESTROYED once it is destroyed: expected, and no crash.
    file.on('error', () => {});
    file.destroy();
    rmSync(tmp, { force: true });
    throw err;
  }
}
