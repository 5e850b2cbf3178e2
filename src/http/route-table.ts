import type { Context, Handler, Hono, MiddlewareHandler } from 'hono';
import { TrellisError } from '../events/index.js';
import { parseForgeId } from '../store/forge/driver.js';
import { DOOR_AUTHOR_HEADER, DOOR_SCOPE_HEADER } from './author.js';

/**
 * What a caller must hold to reach a route through the gateway (spec §5: authorization once, in the host
 * hub). In order of trust: `read` (any login that opens the project), `data` (issue and evidence writes a
 * project login may make), `shell` (anything that runs a command or types into a terminal as the host
 * user: admin, or a gate that grants `shell`), `owner` (the admin alone: verdicts, session lifecycle, the
 * host's forge credentials). `agent` is an agent's hook signal: loopback only, never through the gateway.
 */
export type Scope = 'read' | 'data' | 'shell' | 'owner' | 'agent';

/** The scopes a person can hold, in the order each includes the one before (agent is no person's). */
export const PERSON_SCOPES: readonly Scope[] = ['read', 'data', 'shell', 'owner'];

/** What each scope allows, in the README's words (test/route-table.test.ts checks the README against it). */
export const SCOPE_WORDS: Record<Scope, string> = {
  read: 'everything a page shows: the board, issues, specs, sessions, their panes read-only, evidence, evals',
  data: "open, reply to, remark on, edit, close and reopen local issues (a forge issue's writes are the owner's), resolve or retract a reply, reply to an eval remark; attach evidence; mark a session seen",
  shell: 'run commands as the host user: spawn, prompt, raw keys, the pane for writing, interrupt, resume, review, checks, eval runs, merge, answer, uploads, sync',
  owner: "the admin's alone: accept a session's changed check, merge over blocking checks (an override), close or quarantine a session, promote an issue to a forge, and every write to a forge issue (open, reply, close) with this machine's token",
  agent: "an agent's hook signals: loopback only, never through the gateway",
};

export interface RouteRow {
  readonly method: 'GET' | 'POST';
  /** Hono's path pattern, exactly as the route is registered. */
  readonly path: string;
  readonly scope: Scope;
  /** What the route does, in words a refusal can say. */
  readonly what: string;
  /** The pane socket: opened with every `mode` read, it types nothing, and is `read`. */
  readonly readOnlyWhenModeRead?: true;
  /**
   * What the route needs when its target is a forge issue (the `:id` a forge id, or an opened issue's
   * `store` a forge), whose write goes out with this machine's forge token: `owner`. The gateway stamps
   * the scope it judged the caller to hold (DOOR_SCOPE_HEADER); `route()` checks this scope against it
   * once the target is known (forgeGuard). A local target needs `scope` only.
   */
  readonly forgeScope?: Scope;
}

/**
 * Every route of the per-project backend, deny by default: `route()` registers only a row of this table,
 * the gateway reaches only a route matched here (http/route-judge.ts), /auth/status tells the page which
 * rows its login may use, and test/route-table.test.ts fails on a route of the app without a row.
 */
export const ROUTE_TABLE = [
  { method: 'GET', path: '/health', scope: 'read', what: 'the health probe' },
  { method: 'GET', path: '/api/instance', scope: 'read', what: "the backend's identity" },
  { method: 'GET', path: '/api/settings', scope: 'read', what: "the project's settings" },
  { method: 'GET', path: '/api/author', scope: 'read', what: 'who a write is filed as' },
  { method: 'GET', path: '/api/plugins', scope: 'read', what: 'the plugins' },
  { method: 'GET', path: '/api/slash-commands', scope: 'read', what: 'the slash commands' },
  { method: 'GET', path: '/api/guidance', scope: 'read', what: 'the guidance catalog' },
  { method: 'GET', path: '/api/graph', scope: 'read', what: 'the board' },
  { method: 'GET', path: '/api/graph/stream', scope: 'read', what: "the board's change stream" },
  { method: 'GET', path: '/api/specs', scope: 'read', what: 'the spec tree' },
  { method: 'GET', path: '/api/specs/lite', scope: 'read', what: 'the spec search corpus' },
  { method: 'GET', path: '/api/specs/*', scope: 'read', what: "a spec node's history, diff or content" },
  { method: 'GET', path: '/api/edit', scope: 'read', what: "a node's edit in a worktree" },
  { method: 'GET', path: '/api/issues', scope: 'read', what: 'the issue list' },
  { method: 'GET', path: '/api/issues/:id', scope: 'read', what: 'an issue' },
  { method: 'GET', path: '/api/issues/:id/timeline', scope: 'read', what: "an issue's timeline" },
  { method: 'POST', path: '/api/issues', scope: 'data', forgeScope: 'owner', what: 'opening an issue' },
  { method: 'POST', path: '/api/issues/:id/reply', scope: 'data', forgeScope: 'owner', what: 'replying to an issue' },
  { method: 'POST', path: '/api/issues/:id/reply/check', scope: 'data', forgeScope: 'owner', what: 'checking a reply before its files upload' },
  { method: 'POST', path: '/api/issues/:id/remark', scope: 'data', what: 'remarking on an issue' },
  { method: 'POST', path: '/api/issues/:id/replies/:n/:action', scope: 'data', what: 'resolving or retracting a reply' },
  { method: 'POST', path: '/api/issues/:id/close', scope: 'data', forgeScope: 'owner', what: 'closing an issue' },
  { method: 'POST', path: '/api/issues/:id/edit', scope: 'data', forgeScope: 'owner', what: 'editing an issue' },
  { method: 'POST', path: '/api/issues/:id/reopen', scope: 'data', forgeScope: 'owner', what: 'reopening an issue' },
  { method: 'POST', path: '/api/issues/:id/promote', scope: 'owner', what: "promoting an issue to a forge with this machine's token", },
  { method: 'POST', path: '/api/evidence', scope: 'data', what: 'attaching evidence' },
  { method: 'GET', path: '/api/evidence/:hash', scope: 'read', what: 'evidence' },
  { method: 'GET', path: '/api/eval', scope: 'read', what: 'the eval scoreboard' },
  { method: 'GET', path: '/api/eval/*', scope: 'read', what: "a scenario's detail" },
  { method: 'POST', path: '/api/eval/*', scope: 'shell', what: 'running an eval scenario (or filing its reading)' },
  { method: 'GET', path: '/api/eval-remarks/:id', scope: 'read', what: 'an eval remark' },
  { method: 'POST', path: '/api/eval-remarks/:id/reply', scope: 'data', what: 'replying to an eval remark' },
  { method: 'GET', path: '/api/harnesses', scope: 'read', what: 'the installed agents' },
  { method: 'GET', path: '/api/sessions', scope: 'read', what: 'the session list' },
  { method: 'GET', path: '/api/cost', scope: 'read', what: "what the sessions' model use cost" },
  { method: 'POST', path: '/api/sessions', scope: 'shell', what: 'starting a session' },
  { method: 'GET', path: '/api/sessions/:id', scope: 'read', what: 'a session' },
  { method: 'GET', path: '/api/sessions/:id/review', scope: 'read', what: "a session's review bundle" },
  { method: 'GET', path: '/api/sessions/:id/capture', scope: 'read', what: "a session's pane as text" },
  { method: 'GET', path: '/api/sessions/:id/dialog', scope: 'read', what: "the options of a session's dialog" },
  { method: 'GET', path: '/api/sessions/:id/socket', scope: 'shell', what: "typing into a session's terminal", readOnlyWhenModeRead: true },
  { method: 'POST', path: '/api/sessions/:id/prompt', scope: 'shell', what: "typing into a session's terminal" },
  { method: 'POST', path: '/api/sessions/:id/rawkey', scope: 'shell', what: 'sending keys to a session' },
  { method: 'POST', path: '/api/sessions/:id/answer', scope: 'shell', what: "answering a session's dialog" },
  { method: 'POST', path: '/api/sessions/:id/interrupt', scope: 'shell', what: 'interrupting a session' },
  { method: 'POST', path: '/api/sessions/:id/resume', scope: 'shell', what: 'resuming a session' },
  { method: 'POST', path: '/api/sessions/:id/review', scope: 'shell', what: 'putting a session up for review' },
  { method: 'POST', path: '/api/sessions/:id/check', scope: 'shell', what: "running a session's checks" },
  { method: 'POST', path: '/api/sessions/:id/merge', scope: 'shell', what: "merging a session's work" },
  { method: 'POST', path: '/api/sessions/:id/merge/override', scope: 'owner', what: "merging a session's work over its blocking checks" },
  { method: 'POST', path: '/api/sessions/:id/view', scope: 'data', what: 'marking a session seen' },
  { method: 'POST', path: '/api/sessions/:id/accept', scope: 'owner', what: "accepting a session's changed check" },
  { method: 'POST', path: '/api/sessions/:id/close', scope: 'owner', what: 'closing a session' },
  { method: 'POST', path: '/api/sessions/:id/quarantine', scope: 'owner', what: 'quarantining a session' },
  { method: 'POST', path: '/api/sessions/:id/signal/:event', scope: 'agent', what: "an agent's hook signal" },
  { method: 'GET', path: '/api/resources', scope: 'read', what: "the machine's resources" },
  { method: 'POST', path: '/api/uploads', scope: 'shell', what: 'uploading a file to the worker' },
  { method: 'POST', path: '/api/sync', scope: 'shell', what: 'syncing with the remote' },
  { method: 'GET', path: '/*', scope: 'read', what: 'the page and its assets' },
  { method: 'HEAD', path: '/*', scope: 'read', what: 'the page and its assets' },
] as const satisfies readonly (Omit<RouteRow, 'method'> & { readonly method: 'GET' | 'POST' | 'HEAD' })[];

export type Row = (typeof ROUTE_TABLE)[number];
type RowOf<M extends string, P extends string> = Extract<Row, { method: M; path: P }>;

/** `METHOD path`, the key a row is known by (in /auth/status's `routes`, the README, the page). */
export const rowKey = (r: { method: string; path: string }): string => `${r.method} ${r.path}`;

const BY_KEY = new Map<string, Row>(ROUTE_TABLE.map((r) => [rowKey(r), r]));

/** The row registered as `method path`, if the table has one. */
export const rowOf = (method: string, path: string): Row | undefined => BY_KEY.get(`${method} ${path}`);

/** `METHOD path (forge)`: the key of a row's write on a forge issue, listed for a login whose scope covers the row's forgeScope. */
export const forgeKey = (r: { method: string; path: string }): string => `${rowKey(r)} (forge)`;

const RANK: Record<Scope, number> = { read: 0, data: 1, shell: 2, owner: 3, agent: 4 };

/** Whether holding `held` (a person's highest scope) reaches a route of scope `needed`; agent is no person's. */
export const scopeCovers = (held: Scope, needed: Scope): boolean => needed !== 'agent' && held !== 'agent' && RANK[held] >= RANK[needed];

/** A scope's rank, highest trust last (agent above all: no person holds it). */
export const scopeRank = (s: Scope): number => RANK[s];

/**
 * The scope the caller of this request holds, as the door judged it: the gateway's stamp (a client's copy
 * never crosses it). Direct on loopback, with no door, the request is the person at the machine (or a
 * local tool of theirs), who holds the host's token: `owner`. A request the door stamped with an author
 * but no scope it can read is held to `data`, what any login that opens the project has.
 */
export function heldAtDoor(c: Context): Scope {
  const stamped = c.req.header(DOOR_SCOPE_HEADER);
  if (stamped === undefined) return c.req.header(DOOR_AUTHOR_HEADER) === undefined ? 'owner' : 'data';
  return (PERSON_SCOPES as readonly string[]).includes(stamped) ? (stamped as Scope) : 'read';
}

/** The forge store a request to `row` writes to, if any: its `:id` a forge id, or (opening) its body's `store`. */
async function forgeTarget(c: Context, path: string): Promise<string | null> {
  if (path.includes(':id')) return parseForgeId(c.req.param('id') ?? '')?.store ?? null;
  // Opening: the body names the store. Hono keeps the text, so the handler's readJson reads it again.
  let body: unknown;
  try {
    body = JSON.parse(await c.req.text());
  } catch {
    return null; // the handler refuses a malformed body itself
  }
  const store = (body as { store?: unknown } | null)?.store;
  return typeof store === 'string' && store !== 'local' ? store : null;
}

/**
 * The check of a row's forgeScope, before its handler: a write whose target is a forge issue is refused
 * (403) unless the caller holds the row's forgeScope, so no request reaches the forge.
 */
function forgeGuard(row: Row & { forgeScope: Scope }): MiddlewareHandler {
  return async (c, next) => {
    const store = await forgeTarget(c, row.path);
    if (store !== null && !scopeCovers(heldAtDoor(c), row.forgeScope)) {
      throw new TrellisError(
        'FORBIDDEN',
        `${row.what} on ${store} writes to the forge with this machine's token, which is the owner's: a project login cannot; ask the owner (the admin login) to do it, or make it on a local issue`,
      );
    }
    await next();
  };
}

/**
 * Registers `handlers` as the route `method path` of `app`: only a row of the table, and only with its
 * scope written beside it (checked here and by the compiler), so a handler's scope is read where it is.
 */
export function route<M extends Row['method'], P extends Extract<Row, { method: M }>['path']>(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  app: Hono<any>,
  scope: RowOf<M, P>['scope'],
  method: M,
  path: P,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  ...handlers: Array<Handler<any, P> | MiddlewareHandler<any, P>>
): void {
  const row = rowOf(method, path);
  if (!row || row.scope !== scope) throw new Error(`route ${method} ${path} (${scope}) is not a row of http/route-table.ts`);
  const guard = 'forgeScope' in row ? [forgeGuard(row)] : [];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  (app.on as any)(method, path, ...guard, ...handlers);
}
