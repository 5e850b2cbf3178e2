import { fstatSync, readFileSync } from 'node:fs';
import { writeAuthor } from '../store/project/author.js';
import { UsageError } from './usage-error.js';

/**
 * A verb's body: `--body <text>`, `--body -` for standard input, or, with no `--body`, standard input
 * when it is a shell pipe or a file (`echo hi | trellis issue reply x`). A terminal, /dev/null or a
 * socket a parent process left open is never read, so a verb cannot hang waiting on it.
 */
export function readBody(option: unknown): string | undefined {
  if (option === '-') return readStdin();
  if (option !== undefined) {
    if (typeof option !== 'string' && typeof option !== 'number') throw new UsageError('--body takes one text', '');
    return String(option);
  }
  let st;
  try {
    st = fstatSync(0);
  } catch {
    return undefined;
  }
  return st.isFIFO() || st.isFile() ? readStdin() : undefined;
}

function readStdin(): string {
  // A piped body ends in the newline `echo` adds; the thread keeps the text, not the terminator.
  return readFileSync(0, 'utf8').trimEnd();
}

/** The author of a write: `--by`, else the session running this command, else git's user.name (writeAuthor; HTTP writes have the door's rule, http/author.ts). */
export function resolveAuthor(by: unknown, cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  if (by !== undefined && (typeof by !== 'string' || !by.trim())) throw new UsageError('--by takes an author name', '');
  return writeAuthor({ by: by as string | undefined, session: env.TRELLIS_SESSION }, cwd);
}
