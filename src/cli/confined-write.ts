import { TrellisError } from '../events/index.js';

/**
 * A write the file system refused as read-only (EROFS), in words: inside a session's confinement the
 * project's records, the main checkout and the Trellis home are read-only, which is what keeps a
 * person's decisions a person's (issue 45). Whatever the caller's TRELLIS_SESSION or --by says, the
 * write did not happen; the answer says where a person makes it instead.
 */
export function readOnlyError(err: unknown): TrellisError | undefined {
  const e = err as { code?: unknown; path?: unknown } | null;
  if (typeof e !== 'object' || e === null || e.code !== 'EROFS') return undefined;
  const path = typeof e.path === 'string' ? ` ${e.path}` : '';
  return new TrellisError(
    'FORBIDDEN',
    `cannot write${path}: it is read-only here. A session's terminal runs confined, so it writes only its worktree and its own branch; a person's decision (accepting a check, overriding the gate, closing an issue) is made from a terminal outside the session, or from the page`,
    { cause: err },
  );
}
