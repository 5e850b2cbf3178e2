/**
 * Every refusal Trellis makes carries a stable `code`. Surfaces map codes to HTTP statuses and exit codes
 * in one place each (DESIGN.md §6); nothing downstream matches on message text.
 */
export type ErrorCode =
  | 'INVALID_INPUT'
  | 'THREAD_NOT_FOUND'
  | 'THREAD_EXISTS'
  | 'THREAD_NOT_OPEN'
  | 'REPLY_NOT_FOUND'
  | 'NOT_A_REMARK'
  | 'REPLY_RETRACTED'
  | 'EVIDENCE_NOT_FOUND'
  | 'NODE_NOT_FOUND'
  | 'NOT_FOUND'
  | 'VERSION_NOT_FOUND'
  | 'NO_FORGE'
  | 'FORGE_UNREACHABLE'
  | 'FORGE_FAILED'
  /** A git remote refused or could not be reached (sync's fetch or push). */
  | 'REMOTE_FAILED'
  | 'NOT_SUPPORTED'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNKNOWN_STORE'
  | 'REF_LOCKED'
  | 'APPEND_CONFLICT'
  | 'CORRUPT_EVENT'
  | 'NOT_A_REPOSITORY'
  | 'GIT_FAILED'
  | 'SCENARIO_NOT_FOUND'
  | 'SCOPE_NOT_FOUND'
  | 'READING_NOT_FOUND'
  | 'READING_EXISTS'
  | 'SESSION_NOT_FOUND'
  | 'SESSION_EXISTS'
  | 'SESSION_REFUSED'
  | 'PROMPT_REFUSED'
  | 'UNKNOWN_HARNESS'
  /** The harness's agent program is not installed where sessions would run it. */
  | 'HARNESS_NOT_INSTALLED'
  | 'NO_BASE'
  | 'CLEANUP_REFUSED'
  | 'SPAWN_FAILED'
  | 'TMUX_FAILED';

export class TrellisError extends Error {
  override name = 'TrellisError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export const isTrellisError = (err: unknown): err is TrellisError => err instanceof TrellisError;
