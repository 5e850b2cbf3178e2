import type { Handler, Hono, MiddlewareHandler } from 'hono';

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
  data: 'open, reply to, remark on, edit, close and reopen issues, resolve or retract a reply, reply to an eval remark; attach evidence; mark a session seen',
  shell: 'run commands as the host user: spawn, prompt, raw keys, the pane for writing, interrupt, resume, review, checks, eval runs, merge, answer, uploads, sync',
  owner: "the admin's alone: accept a session's changed check, merge over blocking checks (an override), close or quarantine a session, promote an issue to a forge with this machine's token",
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
  { method: 'POST', path: '/api/issues', scope: 'data', what: 'opening an issue' },
  { method: 'POST', path: '/api/issues/:id/reply', scope: 'data', what: 'replying to an issue' },
  { method: 'POST', path: '/api/issues/:id/reply/check', scope: 'data', what: 'checking a reply before its files upload' },
  { method: 'POST', path: '/api/issues/:id/remark', scope: 'data', what: 'remarking on an issue' },
  { method: 'POST', path: '/api/issues/:id/replies/:n/:action', scope: 'data', what: 'resolving or retracting a reply' },
  { method: 'POST', path: '/api/issues/:id/close', scope: 'data', what: 'closing an issue' },
  { method: 'POST', path: '/api/issues/:id/edit', scope: 'data', what: 'editing an issue' },
  { method: 'POST', path: '/api/issues/:id/reopen', scope: 'data', what: 'reopening an issue' },
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
  { method: 'POST', path: '/api/sessions', scope: 'shell', what: 'starting a session' },
  { method: 'GET', path: '/api/sessions/:id', scope: 'read', what: 'a session' },
  { method: 'GET', path: '/api/sessions/:id/review', scope: 'read', what: "a session's review bundle" },
  { method: 'GET', path: '/api/sessions/:id/capture', scope: 'read', what: "a session's pane as text" },
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
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  (app.on as any)(method, path, ...handlers);
}
