import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const LOADER = resolve(import.meta.dirname, '../../dist/src/cli/code-cache.js');
const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));

/** Loads `file` through loadCached in a process of its own (the cache is written as it exits): what it said. */
function load(file: string): { cache: string; answer: unknown; relative: unknown } {
  const script = `const { loadCached } = await import(${JSON.stringify(LOADER)}); const r = loadCached(${JSON.stringify(file)}); console.log(JSON.stringify({ cache: r.cache, answer: r.exports.answer(), relative: r.exports.sibling }));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout) as { cache: string; answer: unknown; relative: unknown };
}

describe("requireCached: the command hook's bundle compiled with V8's code cache", () => {
  it('runs the file as CommonJS, writes the cache at exit, uses it next time, and writes it again over a cache V8 refuses', () => {
    const root = mkdtempSync(join(tmpdir(), 'trellis-code-cache-'));
    roots.push(root);
    writeFileSync(join(root, 'sibling.cjs'), 'module.exports = __filename;\n');
    const file = join(root, 'bundle.cjs');
    writeFileSync(file, "'use strict';\nexports.answer = () => 6 * 7;\nexports.sibling = require('./sibling.cjs');\n");
    const caches = () => readdirSync(root).filter((f) => f.endsWith('.v8cache'));
    expect(load(file)).toEqual({ cache: 'none', answer: 42, relative: join(root, 'sibling.cjs') });
    expect(caches()).toHaveLength(1);
    expect(load(file).cache).toBe('used');
    // Garbage where the cache was (another V8, a torn file): refused, the file still runs, and a good cache replaces it.
    writeFileSync(join(root, caches()[0]!), 'not a code cache');
    expect(load(file)).toMatchObject({ cache: 'rejected', answer: 42 });
    expect(readFileSync(join(root, caches()[0]!), 'utf8')).not.toBe('not a code cache');
    expect(load(file).cache).toBe('used');
    // A rebuilt bundle never meets the old one's cache, even of the same length and mtime (V8 checks only the
    // length, and npm gives every installed file one mtime): the cache of 6 * 7 would answer 42 here.
    const { atime, mtime } = statSync(file);
    const before = readFileSync(file, 'utf8');
    const after = before.replace('6 * 7', '6 * 8');
    expect(after.length).toBe(before.length);
    writeFileSync(file, after);
    utimesSync(file, atime, mtime);
    expect(load(file)).toEqual({ cache: 'none', answer: 48, relative: join(root, 'sibling.cjs') });
  });

  it('runs when the cache cannot be written (a read-only install, a full disk): no cache, no error, no file left', () => {
    const root = mkdtempSync(join(tmpdir(), 'trellis-code-cache-ro-'));
    roots.push(root);
    writeFileSync(join(root, 'sibling.cjs'), 'module.exports = 1;\n');
    const file = join(root, 'bundle.cjs');
    writeFileSync(file, "exports.answer = () => 1;\nexports.sibling = require('./sibling.cjs');\n");
    // A folder where the cache goes: reading it and renaming onto it fail, as writing to a read-only folder would (the tests run as root).
    const hash = createHash('sha1').update(readFileSync(file, 'utf8')).digest('hex').slice(0, 16);
    mkdirSync(`${file}.${hash}.v8cache`);
    expect(load(file)).toEqual({ cache: 'none', answer: 1, relative: 1 });
    expect(load(file)).toEqual({ cache: 'none', answer: 1, relative: 1 });
    expect(readdirSync(root).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});
