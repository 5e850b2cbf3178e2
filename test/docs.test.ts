import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { CAC } from 'cac';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { parse } from '../src/cli/main.js';
import { UsageError } from '../src/cli/usage-error.js';
import { ROUTE_TABLE, rowKey } from '../src/http/route-table.js';
import { cleanupRepos, ROOT, tempDir } from './helpers/repo.js';

/**
 * Issue 44, deliverable 3: the README is a front door and the reference lives in docs/, kept true by
 * this test. Every CLI verb, derived from the command line's own declarations (the cac commands of
 * cli/main.ts, and each command's actions as its own refusal of an unknown action lists them), is
 * documented in docs/cli.md; every route of http/route-table.ts's ROUTE_TABLE is a row of a table in
 * docs/ (its first cell names it as `METHOD path`). The README stays under 20 KB, no table row of the
 * README or docs/ runs past 400 characters, and every relative link between them lands on a file and
 * a heading that exist.
 */

// cli/main.ts builds its cac parser inside parse(); keep the instance it builds, to read its commands.
const built = vi.hoisted(() => ({ cli: undefined as CAC | undefined }));
vi.mock('cac', async (importOriginal) => {
  const real = await importOriginal<typeof import('cac')>();
  return { ...real, cac: (name?: string) => (built.cli = real.cac(name)) };
});

const DOCS = join(ROOT, 'docs');
const pages = (): string[] => readdirSync(DOCS).filter((f) => f.endsWith('.md')).map((f) => join(DOCS, f));
const read = (file: string): string => readFileSync(file, 'utf8');
/** An action no command has, far from every real one, so a refusal lists all of the command's actions. */
const PROBE = 'qqqqqqqqqqqqqq';

/** The command line's own table: each cac command, then the actions its refusal of an unknown one names. */
async function cliCommands(): Promise<CAC['commands']> {
  parse(['status'], ROOT); // builds the parser; the handler is set, never run
  return built.cli!.commands;
}

/** `trellis <command>` for a command whose action is optional, and `trellis <command> <action>` for each action. */
async function verbsOf(commands: CAC['commands']): Promise<string[]> {
  const verbs: string[] = [];
  for (const command of commands) {
    const takesAction = command.args[0]?.value === 'action';
    if (!takesAction || !command.args[0]!.required) verbs.push(`trellis ${command.name}`);
    if (!takesAction) continue;
    // The refusal of an unknown action carries every action's usage line (`trellis hosts add <name> …`).
    let usage = '';
    try {
      await parse([command.name, PROBE], ROOT).handler?.();
    } catch (e) {
      if (!(e instanceof UsageError)) throw e;
      usage = e.usage;
    }
    for (const line of usage.split('\n')) {
      const m = new RegExp(`^\\s*trellis ${command.name} ([a-z][\\w-]*)`).exec(line);
      if (m) verbs.push(`trellis ${command.name} ${m[1]}`);
    }
  }
  return [...new Set(verbs)];
}

/** A verb is documented when docs/cli.md has it in a code span: `` `trellis session merge` `` or `` `trellis session merge <id> …` ``. */
const undocumentedVerbs = (verbs: readonly string[], doc: string): string[] =>
  verbs.filter((v) => !new RegExp('`' + v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '[ `]').test(doc));

/** The first cell of every table row in docs/ (the routes' documentation rows start with `METHOD path`). */
const firstCells = (texts: readonly string[]): string[] =>
  texts.flatMap((t) => t.split('\n').filter((l) => l.startsWith('|')).map((l) => l.split(/(?<!\\)\|/)[1] ?? ''));

/** A route is documented when some table row of docs/ has `` `METHOD path` `` (the table's key) in its first cell. */
const undocumentedRoutes = (rows: readonly { method: string; path: string }[], cells: readonly string[]): string[] =>
  rows.map(rowKey).filter((key) => !cells.some((c) => c.includes(`\`${key}\``)));

const MAX_ROW = 400;
const longRows = (files: readonly string[]): string[] =>
  files.flatMap((f) =>
    read(f)
      .split('\n')
      .flatMap((l, i) => (l.startsWith('|') && l.length > MAX_ROW ? [`${f.startsWith(ROOT) ? f.slice(ROOT.length + 1) : f}:${i + 1}: ${l.length} characters`] : [])),
  );

/** GitHub's anchor for a heading. */
const slug = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');

const brokenLinks = (files: readonly string[]): string[] =>
  files.flatMap((file) => {
    const text = read(file).replace(/```[\s\S]*?```/g, '');
    return [...text.matchAll(/\]\(([^)\s]+)\)/g)].flatMap((m) => {
      const target = m[1]!;
      if (/^[a-z]+:/.test(target)) return [];
      const [path, anchor] = target.split('#');
      const to = path ? resolve(dirname(file), path) : file;
      const where = `${file.startsWith(ROOT) ? file.slice(ROOT.length + 1) : file}: (${target})`;
      if (!existsSync(to)) return [`${where}: no file`];
      if (anchor === undefined || !to.endsWith('.md')) return [];
      const headings = [...read(to).matchAll(/^#+ (.*)$/gm)].map((h) => slug(h[1]!));
      return headings.includes(anchor) ? [] : [`${where}: no heading`];
    });
  });

afterAll(() => cleanupRepos());

describe('the docs', () => {
  it('document every CLI verb in docs/cli.md, derived from the command line itself', async () => {
    const verbs = await verbsOf(await cliCommands());
    // The derivation reaches the actions behind each command, not only the commands.
    expect(verbs).toEqual(expect.arrayContaining(['trellis serve', 'trellis issue open', 'trellis session merge', 'trellis hosts add', 'trellis dashboard password', 'trellis issues export']));
    expect(verbs.length).toBeGreaterThan(60);
    expect(undocumentedVerbs(verbs, read(join(DOCS, 'cli.md')))).toEqual([]);
  });

  it('find a verb added without a doc (a planted command and a planted action)', async () => {
    const commands = await cliCommands();
    built.cli!.command('planted [action]', 'a verb nobody documented');
    // An action added to the session command's own table (what `trellis session planted` would run).
    const { SESSION_ACTIONS } = await import('../src/cli/session-commands.js');
    SESSION_ACTIONS.planted = { ...SESSION_ACTIONS.view!, usage: 'trellis session planted <id>' };
    try {
      const verbs = await verbsOf(commands);
      expect(undocumentedVerbs(verbs, read(join(DOCS, 'cli.md')))).toEqual(['trellis session planted', 'trellis planted']);
    } finally {
      delete SESSION_ACTIONS.planted;
    }
  });

  it('document every route of the route table as a table row of docs/ named `METHOD path`', () => {
    expect(undocumentedRoutes(ROUTE_TABLE, firstCells(pages().map(read)))).toEqual([]);
  });

  it('find a route added without a doc (a planted row)', () => {
    const planted = [...ROUTE_TABLE, { method: 'POST', path: '/api/sessions/:id/planted' }];
    expect(undocumentedRoutes(planted, firstCells(pages().map(read)))).toEqual(['POST /api/sessions/:id/planted']);
  });

  it('keep the README a front door under 20 KB, and no table row of it or of docs/ over 400 characters', () => {
    const bytes = statSync(join(ROOT, 'README.md')).size;
    expect(bytes).toBeLessThan(20 * 1024);
    expect(longRows([join(ROOT, 'README.md'), ...pages()])).toEqual([]);
    // A planted row one character over the limit is found.
    const planted = join(tempDir(), 'planted.md');
    writeFileSync(planted, `| a | ${'x'.repeat(MAX_ROW - 7)} |\n| b | short |\n`);
    expect(longRows([planted]).map((l) => l.replace(/^.*planted\.md/, 'planted.md'))).toEqual(['planted.md:1: 401 characters']);
  });

  it('link only to files and headings that exist (README and docs/)', () => {
    expect(pages().length).toBeGreaterThanOrEqual(13);
    expect(brokenLinks([join(ROOT, 'README.md'), ...pages()])).toEqual([]);
    // A planted page with a link to a missing heading and one to a missing page is found.
    const planted = join(DOCS, 'cli.md').replace(/cli\.md$/, '');
    const dir = tempDir();
    writeFileSync(join(dir, 'a.md'), `# A\n\n[ok](#a) [gone](${planted}cli.md#no-such-heading) [lost](nowhere.md)\n`);
    expect(brokenLinks([join(dir, 'a.md')]).map((l) => l.replace(/^.*a\.md: /, ''))).toEqual([`(${planted}cli.md#no-such-heading): no heading`, '(nowhere.md): no file']);
  });
});
