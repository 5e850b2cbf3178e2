import { crypto } from '../lazy-builtins.js';
import { createReadStream, createWriteStream, readFileSync, statSync, type ReadStream } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { TrellisError } from '../../events/index.js';
import { isCode } from '../fs-errors.js';

const HASH = /^[0-9a-f]{64}$/;
export const isEvidenceHash = (s: string): boolean => HASH.test(s);

/** What a file was called and what it was, as its uploader said: kept beside its bytes (`<hash>.meta.json`). */
export interface EvidenceMeta {
  readonly name: string;
  readonly type: string;
}

const MAX_NAME = 255;
const MIME = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/;

/**
 * The uploader's name and type made safe to keep and to send back in a header: the name's last path
 * segment, control characters and quotes replaced, at most 255 bytes; a type that is not a bare
 * `type/subtype` becomes `application/octet-stream`. No name: nothing is kept.
 */
export function evidenceMeta(name: string | undefined | null, type: string | undefined | null): EvidenceMeta | null {
  // eslint-disable-next-line no-control-regex
  let clean = (name ?? '').split(/[/\\]/).pop()!.replace(/[\u0000-\u001f\u007f"]/g, '_').trim();
  if (!clean || clean === '.' || clean === '..') return null;
  while (Buffer.byteLength(clean) > MAX_NAME) clean = clean.slice(0, -1);
  const t = (type ?? '').split(';')[0]!.trim().toLowerCase();
  return { name: clean, type: MIME.test(t) ? t : 'application/octet-stream' };
}

const BY_EXTENSION: Record<string, string> = {
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', txt: 'text/plain', log: 'text/plain', md: 'text/markdown',
  json: 'application/json', pdf: 'application/pdf', mp4: 'video/mp4', webm: 'video/webm', html: 'text/html', svg: 'image/svg+xml', zip: 'application/zip',
};

/** A file's type by its name's extension (`trellis evidence put <file>`, which has no Content-Type), else `application/octet-stream`. */
export const typeOfName = (name: string): string => BY_EXTENSION[/\.([^.]+)$/.exec(name)?.[1]?.toLowerCase() ?? ''] ?? 'application/octet-stream';

export interface ByteRange {
  readonly start: number;
  /** Inclusive, as in HTTP Range. */
  readonly end: number;
}

/**
 * Evidence bytes, content-addressed by sha256 under `<gitdir>/trellis/evidence/`. Puts stream through a
 * temp file and rename into place, so a reader never sees a partial file under a hash.
 */
export class EvidenceStore {
  constructor(readonly dir: string) {}

  pathOf(hash: string): string {
    if (!isEvidenceHash(hash)) throw new TrellisError('INVALID_INPUT', `'${hash}' is not an evidence hash (64 lowercase hex digits of sha256)`);
    return join(this.dir, hash.slice(0, 2), hash.slice(2));
  }

  /**
   * Stores the bytes; with `meta`, their name and type beside them, unless the same bytes were named
   * already (the first name stands: content-addressed bytes are one file, whoever sends them again).
   */
  async put(source: Uint8Array | NodeJS.ReadableStream, meta: EvidenceMeta | null = null): Promise<{ hash: string; size: number } & Partial<EvidenceMeta>> {
    await mkdir(this.dir, { recursive: true });
    const tmp = join(this.dir, `tmp-${crypto().randomBytes(8).toString('hex')}`);
    const sha = crypto().createHash('sha256');
    let size = 0;
    const input = source instanceof Uint8Array ? Readable.from([source]) : source;
    try {
      await pipeline(
        input,
        async function* (chunks: AsyncIterable<Buffer | string>) {
          for await (const piece of chunks) {
            const chunk = typeof piece === 'string' ? Buffer.from(piece) : piece;
            sha.update(chunk);
            size += chunk.length;
            yield chunk;
          }
        },
        createWriteStream(tmp),
      );
      const hash = sha.digest('hex');
      const path = this.pathOf(hash);
      await mkdir(join(this.dir, hash.slice(0, 2)), { recursive: true });
      await rename(tmp, path);
      if (meta) await writeFile(`${path}.meta.json`, `${JSON.stringify(meta)}\n`, { flag: 'wx' }).catch((e: unknown) => (isCode(e, 'EEXIST') ? undefined : Promise.reject(e)));
      const kept = this.meta(hash);
      return { hash, size, ...(kept ?? {}) };
    } finally {
      await rm(tmp, { force: true });
    }
  }

  /** Size of the stored bytes, or null when nothing is stored under `hash`. */
  size(hash: string): number | null {
    try {
      return statSync(this.pathOf(hash)).size;
    } catch (err) {
      if (isCode(err, 'ENOENT')) return null;
      throw err;
    }
  }

  /** The name and type the bytes were stored with, or null (stored without a name, or before names were kept). */
  meta(hash: string): EvidenceMeta | null {
    try {
      const m = JSON.parse(readFileSync(`${this.pathOf(hash)}.meta.json`, 'utf8')) as Partial<EvidenceMeta>;
      return evidenceMeta(m.name, m.type);
    } catch (err) {
      if (isCode(err, 'ENOENT') || err instanceof SyntaxError) return null;
      throw err;
    }
  }

  /** Throws EVIDENCE_NOT_FOUND unless every hash is stored. */
  require(hashes: readonly string[]): void {
    for (const h of hashes) {
      if (this.size(h) === null) throw new TrellisError('EVIDENCE_NOT_FOUND', `no evidence ${h}; store it first with 'trellis evidence put <file>'`);
    }
  }

  /** Streams the bytes, or one inclusive range of them. */
  open(hash: string, range?: ByteRange): { size: number; stream: ReadStream } {
    const size = this.size(hash);
    if (size === null) throw new TrellisError('EVIDENCE_NOT_FOUND', `no evidence ${hash}`);
    if (range && (range.start < 0 || range.end < range.start || range.start >= size)) {
      throw new TrellisError('INVALID_INPUT', `range ${range.start}-${range.end} is outside the evidence (${size} bytes)`);
    }
    const stream = createReadStream(this.pathOf(hash), range ? { start: range.start, end: Math.min(range.end, size - 1) } : {});
    return { size, stream };
  }
}
