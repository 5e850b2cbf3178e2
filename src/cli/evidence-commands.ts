import { createReadStream } from 'node:fs';
import { basename } from 'node:path';
import { evidenceMeta, typeOfName } from '../store/evidence/evidence.js';
import { pipeline } from 'node:stream/promises';
import { TrellisError } from '../events/index.js';
import { openProject } from './open-project.js';
import { checkShape, type VerbContext } from './shape.js';
import { out } from './output.js';
import { UsageError } from './usage-error.js';
import { unknownAction } from './unknown-action.js';

const PUT = 'trellis evidence put <file|-> [--json]';
const GET = 'trellis evidence get <hash> [--range <start>-<end>]';

export const EVIDENCE_USAGES: Record<string, string> = { put: PUT, get: GET };

/** `trellis evidence put|get`: content-addressed evidence bytes. */
export async function runEvidence(action: string, ctx: VerbContext): Promise<number> {
  if (action === 'put') {
    checkShape({ args: ['file'], options: ['json'], usage: PUT }, ctx);
    const file = ctx.args[0]!;
    const source = file === '-' ? process.stdin : createReadStream(file);
    const opened = new Promise<void>((resolve, reject) => {
      if (file === '-') return resolve();
      source.once('open', () => resolve());
      source.once('error', (e: NodeJS.ErrnoException) =>
        reject(new TrellisError('INVALID_INPUT', `cannot read ${file}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`)),
      );
    });
    await opened;
    // A file keeps its name and type (by its extension); stdin has neither.
    const meta = file === '-' ? null : evidenceMeta(basename(file), typeOfName(file));
    const { hash, size, name, type } = await openProject(ctx.cwd).evidence.put(source, meta);
    await out(ctx.options.json ? `${JSON.stringify({ hash, size, ...(name ? { name, type } : {}) })}\n` : `${hash}\n`);
    return 0;
  }
  if (action === 'get') {
    checkShape({ args: ['hash'], options: ['range'], usage: GET }, ctx);
    const range = ctx.options.range === undefined ? undefined : parseRange(String(ctx.options.range));
    const { stream } = openProject(ctx.cwd).evidence.open(ctx.args[0]!, range);
    await pipeline(stream, process.stdout, { end: false });
    return 0;
  }
  throw unknownAction('evidence', action, EVIDENCE_USAGES);
}

function parseRange(s: string): { start: number; end: number } {
  const m = /^(\d+)-(\d*)$/.exec(s);
  if (!m) throw new UsageError(`--range takes <start>-<end> in bytes, inclusive (e.g. 0-99), not '${s}'`, GET);
  return { start: Number(m[1]), end: m[2] ? Number(m[2]) : Number.MAX_SAFE_INTEGER };
}
