import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, statSync, type ReadStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { TrellisError } from '../../events/index.js';
import { isCode } from '../fs-errors.js';

const HASH = /^[0-9a-f]{64}$/;
export const isEvidenceHash = (s: string): boolean => HASH.test(s);

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

  async put(source: Uint8Array | NodeJS.ReadableStream): Promise<{ hash: string; size: number }> {
    await mkdir(this.dir, { recursive: true });
    const tmp = join(this.dir, `tmp-${randomBytes(8).toString('hex')}`);
    const sha = createHash('sha256');
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
      return { hash, size };
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
