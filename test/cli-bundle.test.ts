/**
 * The bundled CLI (issue 8, item 6): the executable runs `dist/cli/run.js` only when it was built after
 * the compiled sources, the big verbs stay lazy chunks, and code that finds files relative to itself
 * still finds them from inside the bundle.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { chooseEntry, hookCall, readerCall } from '../src/cli/entry-choice.js';
import { cleanupRepos, ok, ROOT, tempDir, tempRepo, trellis } from './helpers/repo.js';

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

describe("hookCall: the command lines the hook's own entry runs", () => {
  it('takes exactly session signal <id> <event>, with --json anywhere after signal', () => {
    expect(hookCall(['session', 'signal', 'ab12', 'Stop'])).toEqual({ id: 'ab12', event: 'Stop', json: false });
    expect(hookCall(['session', 'signal', 'ab12', '--json', 'Stop'])).toEqual({ id: 'ab12', event: 'Stop', json: true });
  });

  it.each([
    ['another verb', ['session', 'show', 'ab12']],
    ['a missing event', ['session', 'signal', 'ab12']],
    ['an extra word', ['session', 'signal', 'ab12', 'Stop', 'more']],
    ['--help', ['session', 'signal', 'ab12', 'Stop', '--help']],
    ['another option', ['session', 'signal', 'ab12', 'Stop', '--by', 'x']],
    ['--json=false', ['session', 'signal', 'ab12', 'Stop', '--json=false']],
    ['-- before the words', ['session', 'signal', '--', 'ab12', 'Stop']],
  ])('leaves %s to the whole command line', (_what, argv) => {
    expect(hookCall(argv)).toBeNull();
  });
});

describe("readerCall: the command lines the readers' own entry runs", () => {
  it('takes exactly board or graph, each with or without --json', () => {
    expect(readerCall(['board'])).toEqual({ verb: 'board', json: false });
    expect(readerCall(['board', '--json'])).toEqual({ verb: 'board', json: true });
    expect(readerCall(['graph'])).toEqual({ verb: 'graph', json: false });
    expect(readerCall(['graph', '--json'])).toEqual({ verb: 'graph', json: true });
    for (const argv of [['board', '--help'], ['board', 'x'], ['board', '--json', '--json'], ['--json', 'board'], ['board', '--json=false'], ['session', 'ls'], []]) expect(readerCall(argv), argv.join(' ')).toBeNull();
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

  /*
   * bin.ts runs the hook's bundle from V8's code cache (code-cache.ts), and an import() in a script compiled
   * from its cache throws "A dynamic import callback was not specified" (Node 20): a hook that loaded
   * isomorphic-git or the price table lazily failed once the cache was written (notify-browser's `session
   * signal … busy` in a clean run). Its lazy packages are required instead (cli.rolldown.config.mjs).
   */
  it("has no import() in the hook's bundle or its chunks", () => {
    const dir = join(ROOT, 'dist/cli');
    const files = ['hook.cjs', ...readdirSync(join(dir, 'hook-chunks')).filter((f) => f.endsWith('.cjs')).map((f) => `hook-chunks/${f}`)];
    const found = files.flatMap((f) => (readFileSync(join(dir, f), 'utf8').match(/\bimport\(/g) ? [f] : []));
    expect(found).toEqual([]);
  });

  it('has a hook entry and a readers\' entry built from the current compiled sources', () => {
    expect(statSync(join(ROOT, 'dist/cli/hook.cjs')).mtimeMs).toBeGreaterThanOrEqual(statSync(join(ROOT, 'dist/src/cli/hook.js')).mtimeMs);
    expect(statSync(join(ROOT, 'dist/cli/board-entry.js')).mtimeMs).toBeGreaterThanOrEqual(statSync(join(ROOT, 'dist/src/cli/board-entry.js')).mtimeMs);
  });

  it("answers the command hook through its own entry as the whole command line does (an unknown session: the same words, exit 1)", async () => {
    const dir = tempRepo();
    const viaHook = await trellis(dir, ['session', 'signal', 'nosuch1', 'Stop'], { input: '{}' });
    // `--` before the words is the same verb, parsed by the whole command line (hookCall declines it).
    const viaMain = await trellis(dir, ['session', 'signal', '--', 'nosuch1', 'Stop'], { input: '{}' });
    expect(viaHook.code).toBe(1);
    expect(viaHook.stderr).toMatch(/^trellis: no session nosuch1\b/);
    expect(viaHook).toEqual(viaMain);
    const misuse = await trellis(dir, ['session', 'signal', 'nosuch1'], { input: '{}' });
    expect(misuse.code).toBe(2);
  });

  it('keeps serve, dashboard and session verbs out of what every command loads', () => {
    const statics = [...readFileSync(BUNDLE, 'utf8').matchAll(/^import\s[^;]*?from\s*["']([^"']+)["']|^import\s*["']([^"']+)["']/gm)].map((m) => m[1] ?? m[2]!);
    expect(statics.length).toBeGreaterThan(0);
    // issue-path, session-path, project-path: the one chunk each of everything those verbs load beyond the
    // command hook's (cli.rolldown.config.mjs; the hook has an entry of its own, hook.js).
    for (const lazy of ['serve-command', 'serve-ui-command', 'dashboard-command', 'issue-path', 'session-path', 'project-path']) {
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
