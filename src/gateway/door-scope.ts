import { judgeRoute, scopeCovers } from '../http/route-judge.js';
import { forgeKey, ROUTE_TABLE, rowKey, rowOf, type Scope } from '../http/route-table.js';
import type { ErrorCode } from '../events/index.js';
import { gateOf } from '../store/host/project-list.js';
import type { Caller } from './gateway-state.js';

/**
 * The highest scope `caller` holds on project `id` (http/route-table.ts says what each allows): the admin
 * (or any loopback client before a password is set) is the owner; a gate login whose gate says
 * `shell: true` has shell; any other caller the project admits (a gate login, anyone at an `open` gate)
 * has data. Whether the caller is admitted at all is GatewayState.projectRefusal's.
 */
export function heldScope(caller: Caller, id: string): Scope {
  if (caller.admin) return 'owner';
  const gate = gateOf(caller.hub, id);
  if (typeof gate === 'object' && gate.shell === true && !!caller.grant?.projects.has(id)) return 'shell';
  return 'data';
}

/**
 * The table's rows `caller` may use on project `id`, as `METHOD path` keys, and (as `METHOD path (forge)`)
 * those it may also use on a forge issue: what the page offers (GET /auth/status).
 */
export function allowedRoutes(caller: Caller, id: string): string[] {
  const held = heldScope(caller, id);
  const rows = ROUTE_TABLE.filter((r) => scopeCovers(held, r.scope));
  const forge = rows.filter((r) => 'forgeScope' in r && scopeCovers(held, r.forgeScope)).map(forgeKey);
  return [...rows.map(rowKey), ...forge];
}

export type DoorVerdict = { readonly ok: true; readonly path: string } | { readonly ok: false; readonly code: ErrorCode; readonly message: string };

const NEEDS: Record<Scope, string> = {
  read: '',
  data: '',
  shell: 'runs commands as this machine\'s user: it needs the admin login, or a project password whose gate grants "shell"',
  owner: 'is the owner\'s to decide: it needs the admin login',
  agent: "is an agent's hook signal: agents send it on this machine, never through the gateway",
};

/**
 * A request to project `id`'s API (the `/p/<id>` prefix stripped) judged as its backend will route it
 * (http/route-judge.ts): an ambiguous path is refused (400), a route the table lacks is unreachable (404),
 * one above the caller's scope refused (403, or 401 asking for a login where none was given); else the
 * path to forward.
 */
export function judgeAtDoor(caller: Caller, id: string, method: string, path: string): DoorVerdict {
  const j = judgeRoute(method, path);
  if (!j.ok) return { ok: false, code: 'INVALID_INPUT', message: j.message };
  if (!j.row || !j.scope) return { ok: false, code: 'NOT_FOUND', message: `no route ${method} ${path.replace(/\?.*$/, '')}` };
  if (scopeCovers(heldScope(caller, id), j.scope)) return { ok: true, path: j.path };
  const message = `${j.row.what} ${NEEDS[j.scope]}`;
  if (j.scope !== 'agent' && !caller.grant && caller.passwordSet) return { ok: false, code: 'UNAUTHENTICATED', message: `log in first (POST /auth/login): ${message}` };
  return { ok: false, code: 'FORBIDDEN', message };
}

/** The table's row a notification's answer is judged as: answering a session's dialog, which lets the agent run commands. */
export const ANSWER_ROW = rowOf('POST', '/api/sessions/:id/answer')!;

/**
 * Whether `caller` may answer a session's dialog on project `id` from a notification: exactly when the
 * door would let it POST the answer route (shell scope). A login without it is shown "Open" only.
 */
export const mayAnswer = (caller: Caller, id: string): boolean => scopeCovers(heldScope(caller, id), ANSWER_ROW.scope);
