import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { TrellisError } from '../events/index.js';
import { exportThreads, importThreads } from '../store/issues/ndjson.js';
import { openProject } from './open-project.js';
import { out, outData } from './output.js';
import { checkShape, type VerbContext } from './shape.js';
import { unknownAction } from './unknown-action.js';

const EXPORT_USAGE = 'trellis issues export [--all] > threads.ndjson';
const IMPORT_USAGE = 'trellis issues import <file|-> [--json]';
const ISSUES_USAGES: Record<string, string> = { export: EXPORT_USAGE, import: IMPORT_USAGE };

/** `trellis issues export` / `trellis issues import`: threads as NDJSON, out and back in. */
export async function runIssuesAction(action: string, ctx: VerbContext): Promise<number> {
  if (action === 'export') {
    checkShape({ args: [], options: ['all'], usage: EXPORT_USAGE }, ctx);
    await outData(await exportThreads(openProject(ctx.cwd), { all: ctx.options.all === true }));
    return 0;
  }
  if (action === 'import') {
    checkShape({ args: ['file'], options: ['json'], usage: IMPORT_USAGE }, ctx);
    const file = ctx.args[0]!;
    const text = file === '-' ? readFileSync(0, 'utf8') : readInput(resolve(ctx.cwd, file));
    const r = await importThreads(openProject(ctx.cwd), text);
    await out(ctx.options.json ? `${JSON.stringify(r)}\n` : `imported ${r.events} new ${r.events === 1 ? 'event' : 'events'} into ${r.streams} ${r.streams === 1 ? 'thread' : 'threads'} from ${r.lines} ${r.lines === 1 ? 'line' : 'lines'}\n`);
    return 0;
  }
  throw unknownAction('issues', action, ISSUES_USAGES);
}

function readInput(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new TrellisError('NOT_FOUND', `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}
