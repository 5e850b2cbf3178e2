import { statSync } from 'node:fs';

/**
 * Which module the executable loads: the bundle when it was built after the compiled sources it was
 * made from, else the unbundled entry. A bundle that is missing, or older than the compiled `run.js`
 * (tsc rewrites every output on each build, so any later `tsc` leaves it older), is never run: the
 * unbundled code is the current code, only slower to load.
 */
export function chooseEntry(bundle: URL, unbundled: URL): URL {
  try {
    return statSync(bundle).mtimeMs >= statSync(unbundled).mtimeMs ? bundle : unbundled;
  } catch {
    return unbundled;
  }
}

/** A command line that is the command hook's, as the adapters write it: `session signal <id> <event>` (and `--json`). */
export interface HookCall {
  readonly id: string;
  readonly event: string;
  readonly json: boolean;
}

/**
 * The command hook's call when `argv` is exactly one (issue 40: every agent event with no serve runs it),
 * else null. The executable then loads the hook's own entry (hook.ts), not the command line's parser and
 * every verb's table; anything else (`--help`, a missing or an extra word, another option) goes to the
 * whole command line, which answers it as ever.
 */
export function hookCall(argv: readonly string[]): HookCall | null {
  if (argv[0] !== 'session' || argv[1] !== 'signal') return null;
  const rest = argv.slice(2);
  const words = rest.filter((a) => a !== '--json');
  if (words.length !== 2 || words.some((a) => a.startsWith('-'))) return null;
  return { id: words[0]!, event: words[1]!, json: words.length < rest.length };
}

/** A command line that is exactly a board read: `board` or `graph`, with or without `--json`. */
export interface ReaderCall {
  readonly verb: 'board' | 'graph';
  readonly json: boolean;
}

/**
 * The board's call when `argv` is exactly `board` or `graph` (and `--json`), else null: the executable then
 * loads the readers' own entry (board-entry.ts), not the command line's parser and verb table (issue 40:
 * board's start-up). Anything else (`--help`, another word or option) goes to the whole command line.
 */
export function readerCall(argv: readonly string[]): ReaderCall | null {
  const verb = argv[0];
  if (verb !== 'board' && verb !== 'graph') return null;
  if (argv.length === 1) return { verb, json: false };
  return argv.length === 2 && argv[1] === '--json' ? { verb, json: true } : null;
}
