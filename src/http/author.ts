import type { Context } from 'hono';
import { writeAuthor } from '../store/project/author.js';
import type { Project } from '../store/compose/open-project.js';

/**
 * The author of a write over HTTP: the body's `by`, else the session named by the `Trellis-Session` header,
 * else git's `user.name` of the project. The same rule as the CLI's (`writeAuthor`), so a reply from the page
 * is filed under the person's name, not a placeholder.
 */
export function requestAuthor(c: Context, project: Project, by?: string): string {
  return writeAuthor({ by, session: c.req.header('trellis-session') }, project.root ?? project.gitdir);
}
