import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, tempDir } from '../../../test/helpers/repo.js';
import { TreeWatcher } from './watch-tree.js';

afterAll(cleanupRepos);

/** Resolves when `pred` holds over the events seen so far. */
function eventsUntil(seen: string[], pred: (seen: string[]) => boolean, onEvent: { fn?: () => void }): Promise<void> {
  return new Promise((resolve) => {
    onEvent.fn = () => pred(seen) && resolve();
    onEvent.fn();
  });
}

describe('TreeWatcher', () => {
  it('keeps reporting a file replaced by rename again and again (as git moves a ref), and files in new folders', async () => {
    const root = tempDir();
    mkdirSync(join(root, 'trellis/issues'), { recursive: true });
    writeFileSync(join(root, 'trellis/issues/t1'), 'a');
    const seen: string[] = [];
    const hook: { fn?: () => void } = {};
    const w = new TreeWatcher(root, (p) => {
      seen.push(p);
      hook.fn?.();
    });
    try {
      const replace = (content: string) => {
        writeFileSync(join(root, 'trellis/issues/t1.lock'), content);
        renameSync(join(root, 'trellis/issues/t1.lock'), join(root, 'trellis/issues/t1'));
      };
      const count = (name: string) => seen.filter((p) => p === name).length;
      replace('b');
      await eventsUntil(seen, () => count('trellis/issues/t1') >= 1, hook);
      const after1 = count('trellis/issues/t1');
      replace('c');
      await eventsUntil(seen, () => count('trellis/issues/t1') > after1, hook);
      replace('d');
      const after2 = count('trellis/issues/t1');
      await eventsUntil(seen, () => count('trellis/issues/t1') > after2, hook);

      mkdirSync(join(root, 'fresh'));
      await eventsUntil(seen, () => seen.includes('fresh'), hook);
      writeFileSync(join(root, 'fresh/node.md'), 'x');
      await eventsUntil(seen, () => seen.includes('fresh/node.md'), hook);
      expect(seen).toContain('fresh/node.md');
    } finally {
      w.close();
    }
  });
});
