import { openProject } from './open-project.js';
import { syncLines, syncProject } from '../store/sync/verbs.js';
import { out } from './output.js';
import type { VerbContext } from './shape.js';
import { UsageError } from './usage-error.js';

export const SYNC_USAGE = 'trellis sync [<remote>] [--push-only|--fetch-only] [--json]';

/** `trellis sync`: the shared sync verb, printed as a summary (or its JSON). */
export async function runSync(ctx: VerbContext): Promise<number> {
  for (const [name, value] of Object.entries(ctx.options)) {
    if (name === '--' || value === undefined) continue;
    if (!['pushOnly', 'fetchOnly', 'json'].includes(name)) throw new UsageError(`--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} does not apply here`, SYNC_USAGE);
    if (value !== true) throw new UsageError(`--${name} takes no value`, SYNC_USAGE);
  }
  if (ctx.args.length > 1) throw new UsageError(`unexpected '${ctx.args.slice(1).join(' ')}'`, SYNC_USAGE);
  if (ctx.options.pushOnly && ctx.options.fetchOnly) throw new UsageError('--push-only and --fetch-only exclude each other', SYNC_USAGE);
  const mode = ctx.options.pushOnly ? 'push-only' : ctx.options.fetchOnly ? 'fetch-only' : 'both';
  const summary = await syncProject(openProject(ctx.cwd), { ...(ctx.args[0] ? { remote: ctx.args[0] } : {}), mode });
  await out(ctx.options.json ? `${JSON.stringify(summary, null, 2)}\n` : syncLines(summary));
  return 0;
}
