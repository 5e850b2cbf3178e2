import { STREAM_KINDS, type StreamCause, type StreamKindName } from '../streams/stream-names.js';

/*
 * What a change event names: its causes and, per kind, the ids that moved (the live watcher's bookkeeping,
 * kept beside it so the watcher stays one idea).
 */

/** What moved: a stream kind's cause (stream-names.ts), or one of the watcher's own inputs. */
export type ChangeCause = StreamCause | 'forge' | 'specs' | 'config' | 'worktrees' | 'resync';

/**
 * The ids that moved, by stream kind. A kind listed here names every stream of it that moved in this
 * change; a kind among the causes but absent here moved without a name (packed-refs rewritten, a resync):
 * any of its streams may have.
 */
export type MovedIds = Partial<Record<MovedKind, string[]>>;
/**
 * A stream kind, or `branches`: the local branches whose tips moved (`main`, `trellis/s1`) or whose
 * worktree's spec files were edited, named with a `worktrees` change (a session's review reads its branch,
 * trunk and its worktree's declarations). A `worktrees` change naming none moved no branch (a worktree
 * added, removed or switched, an edit in a worktree on no branch).
 */
export type MovedKind = StreamKindName | 'branches';

/** The causes a change of streams announces at once, without comparing boards. */
export const STREAM_CHANGES: ReadonlySet<ChangeCause> = new Set(['issues', 'forge', 'sessions', 'evals']);

/** Per stream kind, the ids that moved; null once one of its moves named no id (any may have moved). */
export type Moved = Map<MovedKind, Set<string> | null>;

/** The stream kind each stream cause announces. */
const KIND_OF_CAUSE: ReadonlyMap<ChangeCause, StreamKindName> = new Map(STREAM_KINDS.flatMap((k) => (k.cause ? [[k.cause, k.kind] as const] : [])));

/** The branch a name under `refs/` (as the refs folder's watcher sees it) moves: `heads/trellis/s1.lock` → `trellis/s1`. */
export const branchOf = (rel: string): string => rel.slice('heads/'.length).replace(/\.lock$/, '');

export function noteMoved(moved: Moved, cause: ChangeCause, id: string | undefined): void {
  // A worktrees change names the branch it moved, or none: it moved no branch by name.
  if (cause === 'worktrees') {
    if (id !== undefined) moved.set('branches', (moved.get('branches') ?? new Set()).add(id));
    return;
  }
  const kind = KIND_OF_CAUSE.get(cause);
  if (!kind) return;
  const ids = moved.get(kind);
  if (ids === null) return;
  if (id === undefined) moved.set(kind, null);
  else moved.set(kind, (ids ?? new Set()).add(id));
}
