import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// Module-level on purpose: a memo of where this very code is installed, the same for every caller.
let found: { dir: string; version: string } | undefined;

/**
 * The installed trellis package: found by walking up from this file, so it is the same whether the code
 * runs from `src/` (tests) or from `dist/src/` (the built CLI).
 */
export function packageRoot(): { dir: string; version: string } {
  if (found) return found;
  for (let url = new URL('.', import.meta.url); url.pathname !== '/'; url = new URL('..', url)) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'trellis') return (found = { dir: fileURLToPath(url), version: pkg.version ?? '0.0.0' });
    } catch {}
  }
  throw new Error('cannot find the trellis package root above this file');
}
