/**
 * ARCHITECTURE.md names files and the functions that hold each rule; a move or a rename that leaves it
 * behind sends the next reader to nothing. Every path it names must exist, and every name in its rule
 * index ("Where each rule lives") must be declared or used in the files its row names.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const DOC = readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8');

/** A path as the page writes it: under src/ (`store/issues/verbs.ts`), else from the repository's top (`test/…`). */
const located = (path: string): string | null =>
  [join(ROOT, 'src', path), join(ROOT, path)].find((p) => existsSync(p)) ?? null;

const ticked = (text: string): string[] => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

describe('ARCHITECTURE.md', () => {
  it('names only files that exist', () => {
    // In prose, tables and the walk-throughs alike: any word that is a path to a TypeScript file.
    const paths = [...DOC.matchAll(/(?<![\w/.-])[\w.-]+(?:\/[\w.-]+)+\.tsx?(?!\w)/g)].map((m) => m[0]);
    expect(paths.length).toBeGreaterThan(150);
    expect(paths.filter((p) => !located(p))).toEqual([]);
  });

  it("finds every rule of its index in the files its row names", () => {
    const index = DOC.slice(DOC.indexOf('## Where each rule lives'));
    const rows = index.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| rule'));
    expect(rows.length).toBeGreaterThan(80);
    const missing = rows.flatMap((row) => {
      const [rule, files, names] = row.slice(2, -2).split(' | ');
      const texts = ticked(files!).map((f) => readFileSync(located(f) ?? join(ROOT, 'src', f), 'utf8'));
      const idents = ticked(names!).flatMap((n) => n.split(/[\s.(),→'"]+/)).filter((n) => /^[A-Za-z_]\w*$/.test(n));
      return idents.filter((n) => !texts.some((t) => new RegExp(`\\b${n}\\b`).test(t))).map((n) => `${n}: ${rule}`);
    });
    expect(missing).toEqual([]);
  });
});
