import type { Context } from 'hono';
import type { Project } from '../store/compose/open-project.js';

/**
 * The header the gateway stamps on every request it forwards: who the door let in (a named login, an
 * identity proxy's person, else `human`), percent-encoded UTF-8. The gateway removes any copy a client
 * sent and always writes its own, so a request that came through the door carries exactly the door's
 * word. The backend binds loopback only: the one other writer of this header is a process on this
 * machine, which could as well name any author with `by` (as the CLI's `--by` does).
 */
export const DOOR_AUTHOR_HEADER = 'trellis-door-author';

/**
 * The header the gateway stamps beside the author: the scope it judged the caller to hold on the project
 * (`read`, `data`, `shell` or `owner`; gateway/door-scope.ts heldScope), stripped from what a client sent
 * like the author's. The backend reads it where a route's need depends on its target (a forge issue's
 * write is `owner`: route-table.ts heldAtDoor and forgeScope); absent, the request came direct on loopback.
 */
export const DOOR_SCOPE_HEADER = 'trellis-door-scope';

/**
 * The header the gateway stamps on an answer it makes itself from a notification (gateway/wait-deliver.ts):
 * the channel it came through (`a notification`, `ntfy`, `a webhook link`). Stripped from what a client
 * sends like the author's, so an answer proxied from the page can only read as `the page`.
 */
export const DOOR_VIA_HEADER = 'trellis-door-via';

/** Who a page write is filed as when nobody at the door is known (spec §4.6.5: `human` from the dashboard). */
export const PAGE_AUTHOR = 'human';

/** The door's stamp, decoded; null when the request did not come through the gateway. */
export function doorAuthor(c: Context): string | null {
  const stamped = c.req.header(DOOR_AUTHOR_HEADER);
  if (stamped === undefined) return null;
  try {
    return decodeURIComponent(stamped).trim() || PAGE_AUTHOR;
  } catch {
    return PAGE_AUTHOR;
  }
}

/**
 * The author of a write over HTTP. Through the gateway it is the door's stamp, whatever the body's `by`
 * or a `Trellis-Session` header says (the gateway strips that header too), so nothing from the network
 * speaks as a session or as another person. Direct on loopback (a local tool, an agent's curl, the page
 * of a plain `trellis serve`): the body's `by`, else the session a `Trellis-Session` header names, else
 * `human` — the page's writes carry `human`, never git's `user.name` of the machine (spec §4.6.5). The
 * CLI keeps its own rule (store/project/author.ts `writeAuthor`).
 */
export function requestAuthor(c: Context, _project: Project, by?: string): string {
  const door = doorAuthor(c);
  if (door !== null) return door;
  const given = by?.trim();
  if (given) return given;
  const session = c.req.header('trellis-session')?.trim();
  return session || PAGE_AUTHOR;
}


/** The channel an HTTP answer came through: the gateway's stamp when it is one it makes, else the page. */
export function doorVia(c: Context): 'the page' | 'a notification' | 'ntfy' | 'a webhook link' {
  const v = c.req.header(DOOR_VIA_HEADER);
  return v === 'a notification' || v === 'ntfy' || v === 'a webhook link' ? v : 'the page';
}
