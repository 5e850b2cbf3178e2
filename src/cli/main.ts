/**
 * The `trellis` command line. Every command is declared here; handlers load lazily so a verb pays only
 * for what it uses. Exit codes are decided in one place: 0 success, 1 failure, 2 misuse (DESIGN.md §6).
 */
import { cac } from 'cac';
import { readFileSync } from 'node:fs';
import { isTrellisError } from '../events/errors.js';
import { err } from './output.js';
import { UsageError } from './usage-error.js';

/** The package's version, found by walking up from this file (the same from src/ and from dist/src/). */
function packageVersion(): string {
  for (let url = new URL('.', import.meta.url); url.pathname !== '/'; url = new URL('..', url)) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'trellis' && pkg.version) return pkg.version;
    } catch {}
  }
  return '0.0.0';
}

type Handler = () => Promise<number>;

// cac's parser drops a lone `-`, the conventional name of standard input; carry it through in disguise.
const DASH = '\u0000-';
const restoreDash = <T>(v: T): T | string => (v === DASH ? '-' : v);

/** Builds a fresh parser (tests build one per parse) and returns the handler argv selects. */
export function parse(argv: readonly string[], cwd: string): { handler: Handler | undefined; help: () => void } {
  const cli = cac('trellis');
  let handler: Handler | undefined;
  const ctx = (args: readonly string[], options: Record<string, unknown>) => ({
    cwd,
    args: args.map(restoreDash),
    options: Object.fromEntries(Object.entries(options).map(([k, v]) => [k, Array.isArray(v) ? v.map(restoreDash) : restoreDash(v)])),
  });

  cli
    .command('issue <action> [...args]', 'Local issue threads: open, reply, remark, resolve, unresolve, retract, close, show, ls')
    .usage('issue <action> [...args] [options]   (see the README for each action)')
    .option('--node <id>', 'Spec node the issue is bound to (repeatable)', { type: [String] })
    .option('--body <text>', "Body text; '-' reads standard input")
    .option('--evidence <hash>', 'Evidence hash to attach (repeatable)', { type: [String] })
    .option('--reading <r>', 'The reading a remark was authored against')
    .option('--scenario <id>', 'Open an eval-remark thread scoped to this scenario')
    .option('--store <store>', 'Store to open in or list from (default local)')
    .option('--by <author>', 'Author (default: $TRELLIS_SESSION, else git user.name)')
    .option('--all', 'ls: include issues that are no longer open')
    .option('--json', 'Print JSON')
    .action((action: string, args: string[], options: Record<string, unknown>) => {
      handler = async () => (await import('./issue-commands.js')).runIssue(action, ctx(args, options));
    });

  cli
    .command('issues', 'The whole merged issue list, every status')
    .option('--json', 'Print the list as JSON')
    .action((options: Record<string, unknown>) => {
      handler = async () => (await import('./issue-commands.js')).runIssues(ctx([], options));
    });

  cli
    .command('evidence <action> [...args]', 'Content-addressed evidence: put <file|->, get <hash>')
    .option('--range <start-end>', 'get: only these bytes (inclusive)')
    .option('--json', 'put: print {hash, size}')
    .action((action: string, args: string[], options: Record<string, unknown>) => {
      handler = async () => (await import('./evidence-commands.js')).runEvidence(action, ctx(args, options));
    });

  cli.usage('<command> [options]');
  cli.help();
  cli.version(packageVersion());
  let parsed;
  try {
    parsed = cli.parse(['node', 'trellis', ...argv.map((a) => (a === '-' ? DASH : a))], { run: true });
  } catch (e) {
    if (!(e instanceof Error && e.name === 'CACError')) throw e;
    // Unknown option, missing option value: misuse, answered with the command's own usage.
    const command = cli.matchedCommandName;
    return {
      handler: async () => {
        throw new UsageError(e.message, command ? await usageOf(command) : 'trellis <command> [options]');
      },
      help: () => cli.outputHelp(),
    };
  }
  const helped = parsed.options.help || parsed.options.version;
  if (!handler && !helped) {
    const word = parsed.args[0];
    if (word === undefined) handler = async () => (cli.outputHelp(), 0);
    else
      handler = async () => {
        throw new UsageError(`unknown command '${word}'`, 'trellis <command> [options]   (trellis --help lists the commands)');
      };
  }
  return { handler, help: () => cli.outputHelp() };
}

async function usageOf(command: string): Promise<string> {
  if (command === 'issue') return `\n${(await import('./issue-commands.js')).issueUsage()}`;
  if (command === 'issues') return 'trellis issues [--json]';
  if (command === 'evidence') return `\n${(await import('./evidence-commands.js')).evidenceUsage()}`;
  return `trellis ${command} --help`;
}

/** Runs one command line to completion and returns its exit code. */
export async function main(argv: readonly string[], cwd: string): Promise<number> {
  try {
    const { handler } = parse(argv, cwd);
    return handler ? await handler() : 0;
  } catch (e) {
    return report(e);
  }
}

async function report(e: unknown): Promise<number> {
  if (e instanceof UsageError) {
    const usage = e.usage ? `\nusage: ${e.usage}` : '';
    await err(`trellis: ${e.message}${usage}\n`);
    return 2;
  }
  if (isTrellisError(e)) {
    await err(`trellis: ${e.message}\n`);
    return 1;
  }
  await err(`trellis: internal error: ${e instanceof Error ? (process.env.TRELLIS_DEBUG ? e.stack : e.message) : String(e)}\n`);
  return 1;
}
