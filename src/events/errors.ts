/**
 * Every refusal Trellis makes carries a stable `code`. Surfaces map codes to HTTP statuses and exit codes
 * in one place each (DESIGN.md §6); nothing downstream matches on message text.
 */
export type ErrorCode =
  | 'INVALID_INPUT'
  /** trellis.json (or trellis.local.json) cannot be used: the server's configuration, not the request. */
  | 'CONFIG_INVALID'
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
  /** A byte range of evidence that lies past its end. */
  | 'RANGE_NOT_SATISFIABLE'
  /** The server failed in a way it did not foresee; its log says why (never thrown: onError's last answer). */
  | 'INTERNAL'
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
  /** A host of that name is registered already (hub.json `hosts`). */
  | 'HOST_EXISTS'
  | 'SESSION_REFUSED'
  /** A notification's answer came after the wait was already answered (a second tap, a replay, another device). */
  | 'ALREADY_ANSWERED'
  /** A notification's answer came after its wait ended (answered elsewhere, or the agent moved on). */
  | 'WAIT_ENDED'
  /** A merge the session's checks block (a regressed or unmeasured-at-head scenario), not overridden. */
  | 'MERGE_BLOCKED'
  | 'PROMPT_REFUSED'
  | 'UNKNOWN_HARNESS'
  /** The harness's agent program is not installed where sessions would run it. */
  | 'HARNESS_NOT_INSTALLED'
  | 'NO_BASE'
  | 'CLEANUP_REFUSED'
  | 'SPAWN_FAILED'
  | 'TMUX_FAILED'
  /** The disk (or the user's quota on it) is full: a write could not be made. */
  | 'DISK_FULL'
  /** The host's project catalog (`$TRELLIS_HOME/projects.json`) cannot be read; nothing rewrites it. */
  | 'CATALOG_MALFORMED'
  /** A step a host verb runs (`git init`, `trellis init`) exited non-zero; its details carry the transcript. */
  | 'STEP_FAILED'
  /** A detached `trellis serve` did not come online; its details carry the log's tail. */
  | 'SERVE_FAILED'
  /** A public face's port is held by another program (EADDRINUSE): another port, or stop what holds it. */
  | 'PORT_IN_USE'
  /** A public face's address or port cannot be bound for another reason (not this machine's address, not permitted). */
  | 'BIND_FAILED'
  /** A live serve of this project already holds its endpoint record: a second one is refused before it boots. */
  | 'ALREADY_SERVING'
  /** A serve's HTTP child did not come up healthy (crashed, exited, never listened or answered in time). */
  | 'BOOT_FAILED'
  /** A revision-checked write came without the revision it was based on (HTTP: no If-Match). */
  | 'PRECONDITION_REQUIRED'
  /** A revision-checked write named a revision that is no longer current; nothing was written. */
  | 'STALE_REVISION'
  /** A gate decision (a merge override, a changed check's acceptance) made by the session it judges. */
  | 'SELF_APPROVAL'
  /** A password that does not match (a login, or the current admin password a change must name). */
  | 'BAD_PASSWORD'
  /** The gateway's refusals (spec §4.3, DESIGN §10). No login, or one that has ended. */
  | 'UNAUTHENTICATED'
  /** A login (or a request's Origin, Host or site) that this route or project does not admit. */
  | 'FORBIDDEN'
  /** hub.json cannot be read: the gateway refuses everything until it is fixed. */
  | 'HUB_CONFIG_BROKEN'
  /** Too many failed password attempts from one client; its Retry-After says when to try again. */
  | 'TOO_MANY_ATTEMPTS'
  /** A login while no admin password is set: there is nothing to log in with. */
  | 'NO_PASSWORD'
  /** The admin password is changed over https or from this machine, never in clear over the network. */
  | 'HTTPS_REQUIRED'
  /** A plaintext HTTP request to a port that speaks https only (answered on the raw socket, then closed). */
  | 'PLAINTEXT_TO_TLS_PORT'
  /** The project's backend did not answer the gateway's proxied request. */
  | 'UPSTREAM_UNREACHABLE'
  /** A WebSocket route asked for without the upgrade. */
  | 'UPGRADE_REQUIRED'
  /** A folder Trellis writes into is a symlink, someone else's, or open to other users: nothing is written there. */
  | 'UNSAFE_FOLDER';

export class TrellisError extends Error {
  override name = 'TrellisError';
  /** Facts a caller needs beside the message (a step's exit code and transcript); HTTP answers carry them beside `error`. */
  readonly details: Readonly<Record<string, unknown>> | undefined;
  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown; details?: Readonly<Record<string, unknown>> },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.details = options?.details;
  }
}

/** A revision-checked write refused because `current` is no longer the revision it was based on. */
export class StaleRevisionError extends TrellisError {
  constructor(
    message: string,
    readonly current: string,
  ) {
    super('STALE_REVISION', message);
  }
}

/** Too many failed password attempts from one client: refused for `retryAfter` more seconds (HTTP: Retry-After). */
export class TooManyAttemptsError extends TrellisError {
  constructor(
    message: string,
    readonly retryAfter: number,
  ) {
    super('TOO_MANY_ATTEMPTS', message);
  }
}

export const isTrellisError = (err: unknown): err is TrellisError => err instanceof TrellisError;

/**
 * A file-system error that says the disk or the quota is full (ENOSPC, EDQUOT), as the refusal a
 * person can act on: which disk (by the path being written) and the repair. Anything else: undefined.
 */
export function diskFullError(err: unknown): TrellisError | undefined {
  if (err instanceof TrellisError) return err.code === 'DISK_FULL' ? err : undefined;
  const e = err as { code?: unknown; path?: unknown; dest?: unknown } | null;
  if (typeof e !== 'object' || e === null || (e.code !== 'ENOSPC' && e.code !== 'EDQUOT')) return undefined;
  const path = typeof e.path === 'string' ? e.path : typeof e.dest === 'string' ? e.dest : undefined;
  const where = path ? `the disk holding ${path}` : 'the disk';
  const what = e.code === 'EDQUOT' ? `${where} is over this user's quota (EDQUOT)` : `${where} is full (ENOSPC)`;
  return new TrellisError(
    'DISK_FULL',
    `${what}: the write was not made. Repair: free space on that disk (see 'df -h${path ? ` ${path.replace(/\/[^/]*$/, '') || '/'}` : ''}'), then retry; reads keep working meanwhile`,
    { cause: err },
  );
}
