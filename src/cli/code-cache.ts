import { createRequire } from 'node:module';
import type { Script } from 'node:vm';

// Builtins required, not imported: an ES module's import of a builtin makes a facade that reads every export
// (crypto's loads webcrypto), and the hook requires these again from its bundle anyway.
const require = createRequire(import.meta.url);
const { createHash } = require('node:crypto') as typeof import('node:crypto');
const { readFileSync, renameSync, unlinkSync, writeFileSync } = require('node:fs') as typeof import('node:fs');
const { dirname } = require('node:path') as typeof import('node:path');
const vm = require('node:vm') as typeof import('node:vm');

/**
 * `require(file)` for a CommonJS bundle, compiled with V8's code cache (issue 40: the command hook runs once per
 * agent event, and compiling its bundle and the functions it calls was a large share of its CPU; Node 20 has no
 * module.enableCompileCache). The cache sits beside the bundle, named by a hash of its source, so a rebuilt
 * bundle never meets another's cache (V8 itself refuses one from another V8 version or other flags: then it is
 * written again). It is written once, at exit, after the run has compiled the functions it called, so those
 * come from the cache too. A folder that cannot be written (a read-only install) only means no cache.
 */
export function requireCached(file: string): unknown {
  return loadCached(file).exports;
}

/** What `requireCached` does, and whether V8 took the cache found (`used`), refused it (`rejected`) or found none. */
export function loadCached(file: string): { exports: unknown; cache: 'used' | 'rejected' | 'none' } {
  const source = readFileSync(file, 'utf8');
  // Named by the source's hash: V8 checks only a cache's length against the source, and npm gives every
  // installed file the same mtime, so two builds of one length must never share a name.
  const cacheFile = `${file}.${createHash('sha1').update(source).digest('hex').slice(0, 16)}.v8cache`;
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  // CommonJS's own wrapper, on the source's first line so that line numbers stay the file's.
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: file,
    cachedData,
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const module = { exports: {} as unknown };
  (script.runInThisContext() as (...args: unknown[]) => void)(module.exports, createRequire(file), module, file, dirname(file));
  if (cachedData === undefined || script.cachedDataRejected) process.once('exit', () => save(cacheFile, script));
  return { exports: module.exports, cache: cachedData === undefined ? 'none' : script.cachedDataRejected ? 'rejected' : 'used' };
}

/** Writes the script's code cache whole or not at all (hooks run side by side): a file of its own, renamed into place. */
function save(cacheFile: string, script: Script): void {
  const temporary = `${cacheFile}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, script.createCachedData());
    renameSync(temporary, cacheFile);
  } catch {
    try {
      unlinkSync(temporary);
    } catch {
      // Nothing was written.
    }
  }
}
