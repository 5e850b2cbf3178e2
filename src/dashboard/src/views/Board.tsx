import { signal } from '@preact/signals';
import { Component } from 'preact';
import { useMemo } from 'preact/hooks';
import { get } from '../api';
import { href, replace, route } from '../router';
import { board, boardError, changedIn, specRevision } from '../store';
import type { BoardNode, SpecLite } from '../types';
import { searchSnippet } from '../../../projections/search-snippet.js';
import { ErrorBox, onListKeys, plural, useFetch } from '../ui';
import { parentOnTree, WorktreeNodeEntry, WorktreeNodeRow, WorktreeNodesList, worktreeOnlyNodes, type WorktreeNode } from './worktree-nodes';
import { ProjectSpendLine } from './session/Cost';

/** Folder nodes the user folded, by id (kept across views for the page's life). */
const folded = signal<ReadonlySet<string>>(new Set());

/** A row of the tree: a node on trunk, or a node that exists only in a worktree (under its parent). */
type Row = { readonly node: BoardNode; readonly depth: number; readonly kids: number } | { readonly fresh: WorktreeNode; readonly depth: number };

/** The tree in reading order: each node after its parent, children sorted by id, orphans at the top level. */
function rows(nodes: readonly BoardNode[], fresh: readonly WorktreeNode[], closed: ReadonlySet<string>): Row[] {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const kids = new Map<string | null, (BoardNode | WorktreeNode)[]>();
  const add = (p: string | null, n: BoardNode | WorktreeNode) => {
    const list = kids.get(p) ?? [];
    list.push(n);
    kids.set(p, list);
  };
  for (const n of nodes) add(n.parent && byId.has(n.parent) && n.parent !== n.id ? n.parent : null, n);
  if (fresh.length) {
    const onTree = new Set(byId.keys());
    for (const f of fresh) add(parentOnTree(f.id, onTree), f);
    for (const list of kids.values()) list.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }
  const out: Row[] = [];
  const walk = (parent: string | null, depth: number) => {
    for (const n of kids.get(parent) ?? []) {
      if (!('openIssues' in n)) {
        out.push({ fresh: n, depth });
        continue;
      }
      const k = kids.get(n.id)?.length ?? 0;
      out.push({ node: n, depth, kids: k });
      if (k && !closed.has(n.id) && depth < 64) walk(n.id, depth + 1);
    }
  };
  walk(null, 0);
  return out;
}

export function BoardView() {
  const b = board.value;
  const q = route.value.query.get('q') ?? '';
  const closed = folded.value;
  const wt = changedIn.value;
  const fresh = useMemo(() => worktreeOnlyNodes(b), [b]);
  const list = useMemo(() => (b ? rows(b.nodes, fresh, closed) : []), [b, fresh, closed]);
  if (!b) return boardError.value ? <ErrorBox error={boardError.value} title="The board could not be loaded" /> : <p class="muted">Loading the spec tree…</p>;
  const openTotal = b.nodes.reduce((s, n) => s + n.openIssues.length, 0);
  // A worktree counts when its edits touch a node (the overlay also lists clean ones, with no nodes).
  const edited = b.overlay.filter((o) => o.nodes.length).length;
  const toggle = (id: string) => {
    const next = new Set(folded.value);
    if (!next.delete(id)) next.add(id);
    folded.value = next;
  };
  return (
    <div class="board">
      <div class="toolbar">
        <label class="search">
          <span>Search specs</span>
          <input type="search" value={q} placeholder="title, id or text…" onInput={(e) => replace(`#/board${(e.currentTarget as HTMLInputElement).value ? `?q=${encodeURIComponent((e.currentTarget as HTMLInputElement).value)}` : ''}`)} />
        </label>
        <span class="muted">
          {plural(b.nodes.length, 'node')} · {plural(openTotal, 'open issue')} on nodes
          {edited ? ` · ${plural(edited, 'worktree')} with edits` : ''}
          {fresh.length ? ` · ${plural(fresh.length, 'new node')} not yet on trunk` : ''}
        </span>
        <ProjectSpendLine />
      </div>
      {q ? (
        <SearchResults q={q} fresh={fresh} />
      ) : (
        <>
          <Legend />
          <WorktreeNodesList nodes={fresh} />
          <ul class="tree" role="tree" aria-label="Spec tree" onKeyDown={onListKeys}>
            {list.map((r) =>
              'fresh' in r ? (
                <WorktreeNodeRow key={`${r.fresh.id} ${r.fresh.worktree}`} n={r.fresh} depth={r.depth} />
              ) : (
                <TreeRow key={r.node.id} node={r.node} depth={r.depth} kids={r.kids} folded={closed.has(r.node.id)} worktrees={(wt.get(r.node.id) ?? []).join('\n')} toggle={toggle} />
              ),
            )}
          </ul>
        </>
      )}
    </div>
  );
}

interface RowProps {
  readonly node: BoardNode;
  readonly depth: number;
  readonly kids: number;
  readonly folded: boolean;
  /** The worktrees editing the node, joined (a string, so unchanged rows compare equal). */
  readonly worktrees: string;
  readonly toggle: (id: string) => void;
}

/**
 * One row of the tree. Every change refetches the whole board, so every node is a new object; a row
 * re-renders only when what it shows changed, which keeps a live update of a 1,000-node board cheap.
 */
class TreeRow extends Component<RowProps> {
  override shouldComponentUpdate(next: RowProps): boolean {
    const a = this.props;
    const n = a.node;
    const m = next.node;
    return (
      a.depth !== next.depth ||
      a.kids !== next.kids ||
      a.folded !== next.folded ||
      a.worktrees !== next.worktrees ||
      n.title !== m.title ||
      n.status !== m.status ||
      n.problem !== m.problem ||
      n.openIssues.length !== m.openIssues.length ||
      n.issues.length !== m.issues.length
    );
  }

  override render({ node: n, depth, kids, folded, worktrees, toggle }: RowProps) {
    return (
      <li role="treeitem" aria-level={depth + 1} aria-expanded={kids ? !folded : undefined} class="row" style={{ paddingLeft: `${depth * 1.25 + 0.25}rem` }} data-node={n.id}>
        {kids ? (
          <button class="fold" aria-label={`${folded ? 'Expand' : 'Collapse'} ${n.title}`} onClick={() => toggle(n.id)}>
            {folded ? '▸' : '▾'}
          </button>
        ) : (
          <span class="fold" aria-hidden="true" />
        )}
        <a href={href.node(n.id)} data-nav class="node-link">
          <span class="title">{n.title}</span> <span class="id">{n.id}</span>
        </a>
        {n.status ? <span class={`chip spec-status s-${n.status.replace(/[^a-z]/gi, '')}`}>{n.status}</span> : null}
        {n.problem ? (
          <span class="chip problem" title={n.problem}>
            problem
          </span>
        ) : null}
        {worktrees.includes('\n') ? (
          <span class="chip unresolved" data-testid={`edited-in-${n.id}`} title="changed in more than one worktree: the changes may collide">
            ⚠ edited in {worktrees.split('\n').length} worktrees
          </span>
        ) : null}
        {worktrees
          ? worktrees.split('\n').map((w) => (
              <span class="chip worktree" title={`changed in the worktree ${w}, not yet on trunk`} key={w}>
                ✎ {w}
              </span>
            ))
          : null}
        {/* No zero badge: a node without open issues keeps an empty, unlinked slot so the rows stay aligned. */}
        {n.openIssues.length ? (
          <a
            href={href.issues({ node: n.id, status: 'open' })}
            class="badge has-open"
            data-testid={`badge-${n.id}`}
            aria-label={`${n.openIssues.length} open issues of ${n.issues.length} on ${n.id}`}
            title={`${n.openIssues.length} open of ${n.issues.length} issues`}
          >
            {n.openIssues.length}
          </a>
        ) : (
          <span class="badge none" data-testid={`badge-${n.id}`} aria-hidden="true" />
        )}
      </li>
    );
  }
}

function Legend() {
  return (
    <p class="legend muted">
      <span class="badge has-open">n</span> open issues on the node · <span class="chip worktree">✎ branch</span> edited in a worktree · ▾ fold a folder · ↑↓ move between nodes
    </p>
  );
}

let corpus: { rev: number; data: Promise<SpecLite[]> } | null = null;
const loadCorpus = (rev: number) => {
  if (!corpus || corpus.rev !== rev) corpus = { rev, data: get<SpecLite[]>('api/specs/lite') };
  return corpus.data;
};

function SearchResults({ q, fresh }: { q: string; fresh: readonly WorktreeNode[] }) {
  const rev = specRevision.value;
  const { data, error } = useFetch(() => loadCorpus(rev), [rev]);
  const hits = useMemo(() => {
    if (!data) return [];
    const words = q.toLowerCase().split(/\s+/).filter(Boolean);
    const score = (id: string, title: string) => words.reduce((s, w) => s + (title.toLowerCase().includes(w) ? 2 : 0) + (id.includes(w) ? 1 : 0), 0);
    const onTrunk = data
      .map((n) => {
        const hay = `${n.id}\n${n.title}\n${n.body}`.toLowerCase();
        if (!words.every((w) => hay.includes(w))) return null;
        return { n, score: score(n.id, n.title), snippet: searchSnippet(n.body, words[0]), fresh: null };
      })
      .filter((x): x is NonNullable<typeof x> => x !== null);
    // Nodes only a worktree has: found by title and id (their text is the worktree's, not the corpus's).
    const inWorktrees = fresh
      .filter((f) => words.every((w) => `${f.id}\n${f.title}`.toLowerCase().includes(w)))
      .map((f) => ({ n: f, score: score(f.id, f.title), snippet: '', fresh: f }));
    return [...onTrunk, ...inWorktrees].sort((a, b) => b.score - a.score || a.n.id.localeCompare(b.n.id));
  }, [data, fresh, q]);
  if (error) return <ErrorBox error={error} title="Search is unavailable" />;
  if (!data) return <p class="muted">Loading the search corpus…</p>;
  return (
    <div>
      <p class="muted" role="status">
        {plural(hits.length, 'matching node')} for “{q}”
      </p>
      <ul class="list" onKeyDown={onListKeys}>
        {hits.slice(0, 100).map(({ n, snippet, fresh: f }) =>
          f ? (
            <li key={`${f.id} ${f.worktree}`} class="fresh" data-fresh-node={f.id}>
              <WorktreeNodeEntry n={f} />
            </li>
          ) : (
            <li key={n.id}>
              <a href={href.node(n.id)} data-nav>
                <span class="title">{n.title}</span> <span class="id">{n.id}</span>
                <span class="snippet">{snippet}</span>
              </a>
            </li>
          ),
        )}
      </ul>
    </div>
  );
}
