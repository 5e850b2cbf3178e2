import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, tempDir } from '../../../test/helpers/repo.js';
import { EvidenceStore } from './evidence.js';

afterAll(cleanupRepos);

describe('EvidenceStore', () => {
  const bytes = Buffer.from('0123456789abcdef');
  const hash = createHash('sha256').update(bytes).digest('hex');

  it('puts bytes under their sha256 and reads them back whole or by range', async () => {
    const ev = new EvidenceStore(join(tempDir(), 'evidence'));
    expect(await ev.put(bytes)).toEqual({ hash, size: 16 });
    expect(await ev.put(Readable.from([bytes.subarray(0, 5), bytes.subarray(5)]))).toEqual({ hash, size: 16 });
    expect(ev.size(hash)).toBe(16);
    expect(await text(ev.open(hash).stream)).toBe('0123456789abcdef');
    expect(await text(ev.open(hash, { start: 2, end: 5 }).stream)).toBe('2345');
    expect(await text(ev.open(hash, { start: 10, end: 1_000 }).stream)).toBe('abcdef');
    // no temp files left, one file per content
    expect(readdirSync(ev.dir)).toEqual([hash.slice(0, 2)]);
  });

  it('refuses unknown hashes, malformed hashes and ranges outside the bytes', async () => {
    const ev = new EvidenceStore(join(tempDir(), 'evidence'));
    await ev.put(bytes);
    expect(() => ev.open('0'.repeat(64))).toThrow(expect.objectContaining({ code: 'EVIDENCE_NOT_FOUND' }));
    expect(() => ev.open('../../etc/passwd')).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
    expect(() => ev.open(hash, { start: 16, end: 20 })).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
    expect(() => ev.require([hash, 'f'.repeat(64)])).toThrow(expect.objectContaining({ code: 'EVIDENCE_NOT_FOUND', message: expect.stringContaining('f'.repeat(64)) }));
  });
});
