import { diskFullError, isTrellisError } from '../events/errors.js';
import { readOnlyError } from './confined-write.js';
import { err } from './output.js';
import { UsageError } from './usage-error.js';

/**
 * A command's failure said on standard error, and its exit code: 2 misuse, 1 anything else (DESIGN.md §6).
 * One function for the whole command line (main.ts) and the command hook's own entry (hook.ts).
 */
export async function reportError(e: unknown): Promise<number> {
  if (e instanceof UsageError) {
    await err(`trellis: ${e.message}${e.usage ? `\nusage:${e.usage.startsWith('\n') ? '' : ' '}${e.usage}` : ''}\n`);
    return 2;
  }
  const refusal = isTrellisError(e) ? e : (diskFullError(e) ?? readOnlyError(e));
  if (refusal) {
    // A failed step's own output (a transcript, a log's tail) comes first: it is what says why.
    for (const key of ['transcript', 'logTail']) {
      const said = refusal.details?.[key];
      if (typeof said === 'string' && said !== '') await err(said.endsWith('\n') ? said : `${said}\n`);
    }
    await err(`trellis: ${refusal.message}\n`);
    return 1;
  }
  await err(`trellis: internal error: ${e instanceof Error ? (process.env.TRELLIS_DEBUG ? e.stack : e.message) : String(e)}\n`);
  return 1;
}
