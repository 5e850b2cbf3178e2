import type { Context } from 'hono';
import { TrellisError } from '../events/index.js';
import { findProject, type KnownProject } from '../store/host/project-list.js';
import type { GatewayState } from './gateway-state.js';

/** An ETag header value for a revision. */
export const etagOf = (revision: string): string => `"${revision}"`;

/** The revision a request's If-Match names; PRECONDITION_REQUIRED (428) without one, `hint` saying where to read it. */
export function revisionOf(c: Context, hint: string): string {
  const expected = c.req.header('If-Match')?.trim().replace(/^W\//, '').replace(/^"|"$/g, '');
  if (!expected) throw new TrellisError('PRECONDITION_REQUIRED', `send If-Match with the ETag of ${hint}`);
  return expected;
}

/** The project `:id` names, within the gateway's scope (`--only` hides every other); NOT_FOUND otherwise. */
export function projectOf(c: Context, state: GatewayState): KnownProject {
  const id = c.req.param('id') ?? '';
  if (state.opts.only && id !== state.opts.only) throw new TrellisError('NOT_FOUND', `no project ${id} (neither cataloged nor served)`);
  return findProject(state.opts.home, id);
}
