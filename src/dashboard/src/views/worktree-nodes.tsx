import { href } from '../router';
import '../worktree-nodes.css';
import type { Board } from '../types';

/**
 * Spec nodes that exist only in a worktree: a session (or a person) added the node's file there and it is
 * not on the board's tree yet. The board's overlay names them with their titles (`added`); this is where
 * the page finds them, and the session whose branch the worktree is on (`trellis/<session id>`).
 */
export interface WorktreeNode {
  readonly id: string;
  readonly title: string;
  readonly path: string;
  readonly worktree: string;
  readonly branch: string | null;
  readonly session: { readonly id: string; readonly title: string } | null;
}

export function worktreeOnlyNodes(b: Board | null): WorktreeNode[] {
  if (!b) return [];
  const onTree = new Set(b.nodes.map((n) => n.id));
  const byBranch = new Map(b.sessions.map((s) => [s.branch, s] as const));
  const out: WorktreeNode[] = [];
  for (const o of b.overlay) {
    for (const a of o.added ?? []) {
      if (onTree.has(a.id)) continue;
      const s = o.branch ? byBranch.get(o.branch) : undefined;
      out.push({ ...a, worktree: o.worktree, branch: o.branch, session: s ? { id: s.id, title: s.title } : null });
    }
  }
  return out.sort((x, y) => (x.id === y.id ? (x.worktree < y.worktree ? -1 : 1) : x.id < y.id ? -1 : 1));
}

/** Where a worktree-only node comes from, in words (`words`: "new in", "added in"), with a link to its session when one owns the worktree. */
export function WorktreeOrigin({ n, words }: { n: WorktreeNode; words: string }) {
  return n.session ? (
    <span class="origin">
      {words} session{' '}
      <a href={href.session(n.session.id)} data-testid={`origin-${n.id}`}>
        {n.session.title}
      </a>
    </span>
  ) : (
    <span class="origin" data-testid={`origin-${n.id}`}>
      {words} the worktree <code>{n.branch ?? n.worktree}</code>
    </span>
  );
}

/** A worktree-only node as every list shows it: its link, marked new, and the session or worktree it comes from. */
export function WorktreeNodeEntry({ n, linkClass }: { n: WorktreeNode; linkClass?: string }) {
  return (
    <>
      <a href={href.node(n.id)} data-nav class={linkClass}>
        <span class="title">{n.title}</span> <span class="id">{n.id}</span>
      </a>
      <span class="chip worktree" title={`added in the worktree ${n.worktree}, not yet on trunk`}>
        ✎ new
      </span>
      <WorktreeOrigin n={n} words="new in" />
    </>
  );
}

/** The board's list of worktree-only nodes (none: nothing shown). */
export function WorktreeNodesList({ nodes }: { nodes: readonly WorktreeNode[] }) {
  if (!nodes.length) return null;
  return (
    <section class="worktree-nodes" aria-labelledby="wt-nodes-h" data-testid="worktree-nodes">
      <h2 id="wt-nodes-h">Not yet on trunk</h2>
      <p class="muted">New nodes that exist only in a session’s work. They join the tree when it is merged.</p>
      <ul class="tree">
        {nodes.map((n) => (
          <li class="row" key={`${n.id} ${n.worktree}`} data-worktree-node={n.id}>
            <WorktreeNodeEntry n={n} linkClass="node-link" />
          </li>
        ))}
      </ul>
    </section>
  );
}

/** A worktree-only node's row in the board's tree, under its parent: marked new, with where it comes from. */
export function WorktreeNodeRow({ n, depth }: { n: WorktreeNode; depth: number }) {
  return (
    <li role="treeitem" aria-level={depth + 1} class="row fresh" style={{ paddingLeft: `${depth * 1.25 + 0.25}rem` }} data-fresh-node={n.id}>
      <span class="fold" aria-hidden="true" />
      <WorktreeNodeEntry n={n} linkClass="node-link" />
    </li>
  );
}

/** The tree node a worktree-only node sits under: its nearest ancestor on the tree (null: the top level), as the spec tree finds a parent. */
export function parentOnTree(id: string, onTree: ReadonlySet<string>): string | null {
  const parts = id.split('/');
  for (let n = parts.length - 1; n > 0; n--) {
    const candidate = parts.slice(0, n).join('/');
    if (onTree.has(candidate)) return candidate;
  }
  return null;
}
