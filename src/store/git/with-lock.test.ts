import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, tempDir } from '../../../test/helpers/repo.js';
import { withLock } from './ref-lock.js';

afterAll(() => cleanupRepos());

const opts = { waitMs: 5_000, staleMs: 1_000, takeStale: true };

describe('withLock', () => {
  it('runs holders one at a time, the second after the first settles, and removes the lock after each', async () => {
    const lock = join(tempDir(), 'sub', 'x.lock');
    const order: string[] = [];
    let release!: () => void;
    const first = withLock(lock, opts, async () => {
      order.push('first in');
      await new Promise<void>((r) => (release = r));
      order.push('first out');
    });
    await new Promise<void>((r) => setImmediate(r));
    const second = withLock(lock, opts, async () => void order.push('second'));
    // Had the second run while the first held the lock, it would stand between 'first in' and 'first out'.
    expect(existsSync(lock)).toBe(true);
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(['first in', 'first out', 'second']);
    expect(existsSync(lock)).toBe(false);
  });

  it("breaks a crashed holder's lock (older than staleMs) with takeStale, and refuses it without", async () => {
    const dir = tempDir();
    const lock = join(dir, 'queue.lock');
    mkdirSync(dir, { recursive: true });
    writeFileSync(lock, '');
    const old = new Date(Date.now() - 60_000);
    utimesSync(lock, old, old);
    await expect(withLock(lock, { ...opts, takeStale: false }, async () => 'ran')).rejects.toMatchObject({ code: 'REF_LOCKED' });
    expect(await withLock(lock, opts, async () => 'ran')).toBe('ran');
    // Nothing left behind: neither the lock nor the stale one set aside.
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a failing holder still releases the lock', async () => {
    const lock = join(tempDir(), 'x.lock');
    await expect(withLock(lock, opts, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(existsSync(lock)).toBe(false);
  });
});
