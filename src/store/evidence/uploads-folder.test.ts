import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isTrellisError } from '../../events/index.js';
import { storeUpload, uploadsDir } from './uploads.js';

/** Issue 30, row 5: uploads land in a folder of the user's own (0700); a symlinked folder is refused, never followed. */
const made: string[] = [];
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), 'uploads-folder-'));
  made.push(d);
  return d;
};
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

async function* bytes(text: string): AsyncIterable<Uint8Array> {
  yield Buffer.from(text);
}
const store = (dir: string, text = 'pasted') => storeUpload(bytes(text), 'note.txt', { maxBytes: 1 << 20, dir });
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => 'stored',
    (e: unknown) => (isTrellisError(e) ? `${e.code}: ${e.message}` : String(e)),
  );

describe('the uploads folder is the user’s own', () => {
  it('the default is per user in the temporary folder, not one fixed shared path', () => {
    expect(uploadsDir({})).toBe(join(tmpdir(), `trellis-uploads-${userInfo().uid}`));
    expect(uploadsDir({ TRELLIS_UPLOADS_DIR: '/x/y' })).toBe('/x/y');
  });

  it('made 0700, and an existing folder of ours that others could read is narrowed to 0700', async () => {
    const fresh = join(temp(), 'uploads');
    const up = await store(fresh);
    expect(statSync(fresh).mode & 0o777).toBe(0o700);
    expect(statSync(join(up.path, '..')).mode & 0o777).toBe(0o700);
    const wide = join(temp(), 'wide');
    mkdirSync(wide, { mode: 0o755 });
    await store(wide);
    expect(statSync(wide).mode & 0o777).toBe(0o700);
  });

  it('a symlinked uploads folder is refused and nothing is written where it points', async () => {
    const target = temp();
    const link = join(temp(), 'uploads');
    symlinkSync(target, link);
    expect(await refusal(store(link))).toMatch(/^UNSAFE_FOLDER: the uploads folder .* is a symlink/);
    expect(readdirSync(target)).toEqual([]);
  });

  it('a symlinked <sha256> folder is refused: the file never lands where it points', async () => {
    const dir = join(temp(), 'uploads');
    mkdirSync(dir, { mode: 0o700 });
    const target = temp();
    symlinkSync(target, join(dir, createHash('sha256').update('planted').digest('hex')));
    expect(await refusal(store(dir, 'planted'))).toMatch(/^UNSAFE_FOLDER: .* is a symlink/);
    expect(readdirSync(target)).toEqual([]);
    // and the partial file is gone
    expect(readdirSync(dir).filter((n) => n.startsWith('.incoming-'))).toEqual([]);
    expect(existsSync(join(dir, 'note.txt'))).toBe(false);
  });
});
