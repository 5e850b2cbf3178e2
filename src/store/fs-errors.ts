/** Reading what node's fs errors say: which errno, and which file. */

/**
 * A failed write() carries no path (only open() does); the file being written is named on the error,
 * so a full disk is reported as the disk that holds it (diskFullError).
 */
export function namingPath(err: unknown, path: string): unknown {
  if (typeof err === 'object' && err !== null && (err as { path?: unknown }).path === undefined) (err as { path?: string }).path = path;
  return err;
}

/** Whether `err` is a system error of errno `code` (ENOENT, EEXIST, …). */
export const isCode = (err: unknown, code: string): boolean => typeof err === 'object' && err !== null && (err as { code?: unknown }).code === code;
