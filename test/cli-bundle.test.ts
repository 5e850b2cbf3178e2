/**
 * The bundled CLI (issue 8, item 6): the executable runs `dist/cli/run.js` only when it was built after
 * the compiled sources, the big verbs stay lazy chunks, and code that finds files relative to itself
 * still finds them from inside the bundle.
 */
import { mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { chooseEntry } from '../src/cli/entry-choice.js';
import { cleanupRepos, ok, ROOT, tempDir, tempRepo } from './helpers/repo.js';

afterAll(cleanupRepos);

const BUNDLE = join(ROOT, 'dist/cli/run.js');
const UNBUNDLED = join(ROOT, 'dist/src/cli/run.js');

describe('chooseEntry', () => {
  const files = () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'b'));
    return { bundle: join(dir, 'b', 'run.js'), unbundled: join(dir, 'run.js') };
  };
  const at = (path: string, seconds: number) => {
    writeFileSync(path, '');
    utimesSync(path, seconds, seconds);
  };

  it('takes the bundle when it was built after the compiled entry', () => {
    const f = files();
    at(f.unbundled, 1_000);
    at(f.bundle, 2_000);
    expect(chooseEntry(pathToFileURL(f.bundle), pathToFileURL(f.unbundled)).href).toBe(pathToFileURL(f.bundle).href);
  });

  it('takes the unbundled entry when the bundle is older than the compiled sources (tsc ran since)', () => {
    const f = files();
    at(f.bundle, 1_000);
    at(f.unbundled, 2_000);
    expect(chooseEntry(pathToFileURL(f.bundle), pathToFileURL(f.unbundled)).href).toBe(pathToFileURL(f.unbundled).href);
  });

  it('takes the unbundled entry when there is no bundle', () => {
    const f = files();
    at(f.unbundled, 1_000);
    expect(chooseEntry(pathToFileURL(f.bundle), pathToFileURL(f.unbundled)).href).toBe(pathToFileURL(f.unbundled).href);
  });
});

describe('the built CLI', () => {
  it('has a bundle built from the current compiled sources, so the executable runs it', () => {
    // `npm run build` (and so `npm test`) builds it right after tsc; a later tsc alone makes it stale.
    expect(statSync(BUNDLE).mtimeMs, 'dist/cli/run.js is older than dist/src/cli/run.js: run `npm run build:cli`').toBeGreaterThanOrEqual(
      statSync(UNBUNDLED).mtimeMs,
    );
    expect(chooseEntry(pathToFileURL(BUNDLE), pathToFileURL(UNBUNDLED)).href).toBe(pathToFileURL(BUNDLE).href);
  });

  it('keeps serve, dashboard and session verbs out of what every command loads', () => {
    const statics = [...readFileSync(BUNDLE, 'utf8').matchAll(/^import\s[^;]*?from\s*["']([^"']+)["']|^import\s*["']([^"']+)["']/gm)].map((m) => m[1] ?? m[2]!);
    expect(statics.length).toBeGreaterThan(0);
    // issue-path, signal-path (the command hook), session-path, project-path: the one chunk each of everything
    // those verbs load (cli.rolldown.config.mjs).
    for (const lazy of ['serve-command', 'serve-ui-command', 'dashboard-command', 'issue-path', 'signal-path', 'session-path', 'project-path']) {
      expect(statics.some((s) => s.includes(lazy)), `${lazy} is imported statically`).toBe(false);
      expect(readFileSync(BUNDLE, 'utf8')).toMatch(new RegExp(`import\\(["'][^"']*${lazy}-[^"']*\\.js["']\\)`));
    }
  });

  it('finds the package root from inside the bundle (trellis --version is package.json’s version)', async () => {
    const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    expect((await ok(tempDir(), ['--version'])).trim()).toMatch(new RegExp(`^trellis/${version.replace(/\./g, '\\.')}\\b`));
  });

  it('opens, replies to and shows an issue through the bundle', async () => {
    const dir = tempRepo();
    const id = (await ok(dir, ['issue', 'open', 'bundled', 'concern', '--by', 'tester'])).trim();
    expect((await ok(dir, ['issue', 'reply', id, '--body', 'first reply', '--by', 'tester'])).trim()).toBe('1');
    const shown = JSON.parse(await ok(dir, ['issue', 'show', id, '--json'])) as { concern: string; replies: { body: string }[] };
    expect(shown.concern).toBe('bundled concern');
    expect(shown.replies.map((r) => r.body)).toEqual(['first reply']);
  });
});
