import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { diskFullError, isTrellisError, StaleRevisionError, TooManyAttemptsError, type ErrorCode } from '../events/index.js';

/** Every error code's HTTP status, in one place (DESIGN.md §6). */
const STATUS: Record<ErrorCode, ContentfulStatusCode> = {
  INVALID_INPUT: 400,
  // The project's own configuration is broken: a server-side condition no request can repair.
  CONFIG_INVALID: 500,
  UNKNOWN_STORE: 400,
  THREAD_NOT_FOUND: 404,
  REPLY_NOT_FOUND: 404,
  EVIDENCE_NOT_FOUND: 404,
  NODE_NOT_FOUND: 404,
  VERSION_NOT_FOUND: 404,
  NOT_FOUND: 404,
  THREAD_EXISTS: 409,
  THREAD_NOT_OPEN: 409,
  NOT_A_REMARK: 409,
  REPLY_RETRACTED: 409,
  REF_LOCKED: 409,
  APPEND_CONFLICT: 409,
  NO_FORGE: 409,
  NOT_SUPPORTED: 409,
  FORGE_UNREACHABLE: 502,
  FORGE_FAILED: 502,
  REMOTE_FAILED: 502,
  TMUX_FAILED: 502,
  PAYLOAD_TOO_LARGE: 413,
  RANGE_NOT_SATISFIABLE: 416,
  INTERNAL: 500,
  CORRUPT_EVENT: 500,
  NOT_A_REPOSITORY: 500,
  GIT_FAILED: 500,
  SCENARIO_NOT_FOUND: 404,
  SCOPE_NOT_FOUND: 404,
  READING_NOT_FOUND: 404,
  READING_EXISTS: 409,
  SESSION_NOT_FOUND: 404,
  SESSION_EXISTS: 409,
  HOST_EXISTS: 409,
  SESSION_REFUSED: 409,
  ALREADY_ANSWERED: 409,
  WAIT_ENDED: 410,
  MERGE_BLOCKED: 409,
  CLEANUP_REFUSED: 409,
  NO_BASE: 409,
  PROMPT_REFUSED: 502,
  SPAWN_FAILED: 502,
  UNKNOWN_HARNESS: 400,
  DISK_FULL: 507,
  CATALOG_MALFORMED: 409,
  STEP_FAILED: 422,
  SERVE_FAILED: 504,
  // A serve's start-up refusals: the CLI says them (exit 1); a status is given for completeness.
  PORT_IN_USE: 409,
  BIND_FAILED: 500,
  ALREADY_SERVING: 409,
  BOOT_FAILED: 500,
  PRECONDITION_REQUIRED: 428,
  STALE_REVISION: 412,
  UNSAFE_FOLDER: 409,
  HARNESS_NOT_INSTALLED: 422,
  // The gateway's refusals (gateway/): every one it answers, in the app or on a raw socket, has its status here.
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  // hub.json cannot be read: the gateway's own configuration, which no request repairs; it answers again once fixed.
  HUB_CONFIG_BROKEN: 503,
  TOO_MANY_ATTEMPTS: 429,
  NO_PASSWORD: 409,
  HTTPS_REQUIRED: 403,
  PLAINTEXT_TO_TLS_PORT: 400,
  UPSTREAM_UNREACHABLE: 502,
  UPGRADE_REQUIRED: 426,
  SELF_APPROVAL: 403,
  BAD_PASSWORD: 401,
};

export const errorBody = (code: string, message: string) => ({ error: { code, message } });

/** A code's status, for an answer a route writes itself (one that must carry a header or drain a body first). */
export const statusOf = (code: ErrorCode): ContentfulStatusCode => STATUS[code];

/**
 * A refusal written outside the app, where no error handler runs (the gateway's proxy front, a socket
 * that never reached the app): the code's status from the one table and the app's JSON body, as text.
 */
export const rawRefusal = (code: ErrorCode, message: string): { status: ContentfulStatusCode; body: string } => ({
  status: STATUS[code],
  body: JSON.stringify(errorBody(code, message)),
});

/** The headers a refusal carries beside its body: where to read again (ETag), when to try again (Retry-After). */
function refusalHeaders(err: Error): Record<string, string> | undefined {
  if (err instanceof StaleRevisionError) return { ETag: `"${err.current}"` };
  if (err instanceof TooManyAttemptsError) return { 'Retry-After': String(err.retryAfter) };
  return undefined;
}

/** The app's one error handler: a code becomes a status and a JSON body; nothing leaks a stack. */
export function onError(err: Error, c: Context) {
  if (isTrellisError(err)) {
    // A stale write names the current revision in ETag, so the client can read again and retry.
    return c.json({ ...errorBody(err.code, err.message), ...err.details }, STATUS[err.code], refusalHeaders(err));
  }
  // A full disk is the host's condition, not a bug: 507 Insufficient Storage, naming the disk and the repair.
  const full = diskFullError(err);
  if (full) return c.json(errorBody(full.code, full.message), STATUS[full.code]);
  if (err instanceof HTTPException) {
    const status = err.status as ContentfulStatusCode;
    const code = status === 413 ? 'PAYLOAD_TOO_LARGE' : status === 404 ? 'NOT_FOUND' : 'INVALID_INPUT';
    return c.json(errorBody(code, err.message || 'bad request'), status);
  }
  console.error(`trellis: ${c.req.method} ${c.req.path} failed:`, err);
  return c.json(errorBody('INTERNAL', 'the server failed to answer; its log says why'), STATUS.INTERNAL);
}

export const notFound = (c: Context) => c.json(errorBody('NOT_FOUND', `no route ${c.req.method} ${c.req.path}`), STATUS.NOT_FOUND);
