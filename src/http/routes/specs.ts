import { Hono, type Context } from 'hono';
import { TrellisError } from '../../events/index.js';
import { specMeta } from '../../projections/index.js';
import { requireRoot } from '../../store/project/repository.js';
import { specDiff, specHistory } from '../../store/spec/history.js';
import { requireNode } from '../../store/spec/spec-tree.js';
import { editDelta } from '../../store/spec/worktrees.js';
import { MAX_PATH_INPUT, requireNodeId } from '../../store/safe-path.js';
import { route } from '../route-table.js';
import type { AppContext } from '../context.js';

/**
 * The spec tree. Node ids contain slashes (`auth/login`), so the per-node routes take the id either
 * literally or percent-encoded: /api/specs/auth/login/history and /api/specs/auth%2Flogin/history.
 */
export function specRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  const root = () => requireRoot(ctx.project);

  route(app, 'read', 'GET', '/api/specs', (c) => c.json(ctx.live.specTree().nodes.map(specMeta)));
  // The whole search corpus, from the file system only.
  route(app, 'read', 'GET', '/api/specs/lite', (c) => c.json(ctx.live.specTree().nodes.map((n) => ({ id: n.id, title: n.title, body: n.body }))));

  route(app, 'read', 'GET', '/api/specs/*', async (c) => {
    const rest = decodePath(c, c.req.path.slice('/api/specs/'.length));
    let m: RegExpExecArray | null;
    if ((m = /^(.+)\/history$/.exec(rest))) return c.json(await specHistory(root(), node(m[1]!).path));
    if ((m = /^(.+)\/diff\/([^/]+)$/.exec(rest))) return c.json(await specDiff(root(), node(m[1]!).path, m[2]!));
    if ((m = /^(.+)\/content$/.exec(rest))) {
      const n = node(m[1]!);
      return c.json({ body: n.body, parts: n.parts });
    }
    throw new TrellisError('NOT_FOUND', `no route GET ${c.req.path}; per node: /history, /diff/<hash>, /content`);
  });

  // GET /api/edit?node=<id>[&worktree=<path or branch>]
  route(app, 'read', 'GET', '/api/edit', async (c) => {
    const id = c.req.query('node');
    if (!id) throw new TrellisError('INVALID_INPUT', 'GET /api/edit needs ?node=<id> (and optionally &worktree=<path or branch>)');
    requireNodeId(id);
    const worktree = c.req.query('worktree');
    if (worktree !== undefined && (worktree.length > MAX_PATH_INPUT || /[\u0000-\u001f]/.test(worktree))) {
      throw new TrellisError('INVALID_INPUT', 'worktree must be a worktree path or branch name without control characters');
    }
    const { specRoot, trunk } = ctx.project.settings();
    // A node on the tree has its path; one that exists only in the worktree has the path the overlay found
    // it at (`<id>.md` or `<id>/index.md`), else its likeliest name.
    const added = worktree ? (await ctx.live.overlay.overlay(specRoot, trunk)).find((o) => o.worktree === worktree || o.branch === worktree)?.added : undefined;
    const path = ctx.live.specTree().byId.get(id)?.path ?? added?.find((a) => a.id === id)?.path ?? `${specRoot}/${id}.md`;
    return c.json(await editDelta(root(), { node: id, path, specRoot, trunk, ...(worktree ? { worktree } : {}) }));
  });

  const node = (id: string) => requireNode(ctx.live.specTree(), id);
  return app;
}

function decodePath(c: Context, raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new TrellisError('INVALID_INPUT', `the path ${c.req.path} is not valid percent-encoding`);
  }
}
