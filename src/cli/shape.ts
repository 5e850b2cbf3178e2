import { UsageError } from './usage-error.js';

/** What every verb handler gets: where it runs and what the command line said. */
export interface VerbContext {
  readonly cwd: string;
  readonly args: readonly string[];
  readonly options: Readonly<Record<string, unknown>>;
}

/** The arguments and options a verb accepts, and its usage line. */
export interface Shape {
  /** Positional arguments; `...` marks the rest joined as one text. */
  readonly args: readonly string[];
  readonly options: readonly string[];
  readonly usage: string;
}

/** Options that take no value. */
const FLAGS = new Set(['json', 'all', 'git', 'init', 'repair', 'public', 'ansi', 'fresh', 'records']);

/** Refuses, as misuse (exit 2 with the usage), a command line that does not fit the verb's shape. */
export function checkShape(spec: Shape, ctx: VerbContext): void {
  const rest = spec.args[0]?.startsWith('...');
  const want = spec.args.length;
  if (rest ? ctx.args.length < 1 : ctx.args.length !== want) {
    const what = ctx.args.length < want || rest ? `missing ${spec.args.slice(ctx.args.length).map((a) => `<${a.replace('...', '')}>`).join(' ')}` : `unexpected '${ctx.args.slice(want).join(' ')}'`;
    throw new UsageError(what, spec.usage);
  }
  for (const [name, value] of Object.entries(ctx.options)) {
    if (name === '--' || value === undefined) continue;
    if (!spec.options.includes(name)) throw new UsageError(`--${name} does not apply here`, spec.usage);
    const flag = FLAGS.has(name);
    if (!flag && (value === true || value === false)) throw new UsageError(`--${name} needs a value`, spec.usage);
    if (flag && typeof value !== 'boolean') throw new UsageError(`--${name} takes no value`, spec.usage);
  }
}
