import { computed, signal } from '@preact/signals';
import { configError, getJson } from './api';
import { LiveStream } from './live';
import type { Board, BoardNode } from './types';

/** The board as last fetched, and its ETag for the next conditional GET. */
export const board = signal<Board | null>(null);
export const boardError = signal<unknown>(null);
/** Bumped on every change the stream announces; views holding their own fetches (issues, a thread) refetch on it. */
export const revision = signal(0);
/**
 * Bumped on a change that can move a session's review: a reading filed, a branch or trunk moved, a
 * session event, the spec tree (the review bundle, its banner and its checks table refetch on it).
 */
export const gateRevision = signal(0);
const MOVES_A_REVIEW = new Set(['evals', 'worktrees', 'sessions', 'specs', 'resync', 'config']);
/** Bumped when spec files change (the search corpus and node bodies refetch on it). */
export const specRevision = signal(0);

let etag: string | null = null;
let inFlight: Promise<void> | null = null;
let again = false;

/** Refetches the board; calls made while a fetch runs coalesce into one more fetch after it. */
export function refreshBoard(): Promise<void> {
  if (inFlight) {
    again = true;
    return inFlight;
  }
  inFlight = (async () => {
    do {
      again = false;
      try {
        const r = await getJson<Board>('api/graph', etag ? { headers: { 'If-None-Match': etag } } : {});
        if (r.status !== 304 && r.body) {
          board.value = r.body;
          etag = r.etag;
        }
        boardError.value = null;
        // The board reads trellis.json: it answering means the configuration is usable again.
        configError.value = null;
      } catch (err) {
        // The error itself (its code and details): each view says it in the page's words (ErrorBox).
        boardError.value = err;
      }
    } while (again);
    inFlight = null;
  })();
  return inFlight;
}

/**
 * The board's change stream, shared by every view. On `ready` (first connect and every reconnect, e.g.
 * after a backend reload) the board is refetched, since changes may have been missed while away.
 */
export const graphStream = new LiveStream(
  'api/graph/stream',
  {
    ready: () => {
      revision.value++;
      gateRevision.value++;
      specRevision.value++;
      void refreshBoard();
    },
    graph: (data) => {
      let cause = '';
      let causes: string[] = [];
      try {
        const d = JSON.parse(data) as { cause?: string; causes?: string[] };
        cause = d.cause ?? '';
        causes = d.causes ?? [cause];
      } catch {}
      if (cause === 'specs' || cause === 'resync') specRevision.value++;
      if (causes.some((c) => MOVES_A_REVIEW.has(c))) gateRevision.value++;
      revision.value++;
      void refreshBoard();
    },
  },
  'ready',
  // A refused stream (a malformed trellis.json answers 500) says why through the board's own GET.
  () => void refreshBoard(),
);

export const nodesById = computed(() => new Map<string, BoardNode>((board.value?.nodes ?? []).map((n) => [n.id, n])));

/** Node id → the worktree branches (or paths) whose in-flight edits touch it. */
export const changedIn = computed(() => {
  const m = new Map<string, string[]>();
  for (const o of board.value?.overlay ?? []) {
    for (const id of o.nodes) {
      const list = m.get(id) ?? [];
      list.push(o.branch ?? o.worktree);
      m.set(id, list);
    }
  }
  return m;
});

/** The project's display name (trellis.json's `name`, else its folder's), for the header and the tab. */
export const projectName = signal<string | null>(null);

export async function loadProjectName(): Promise<void> {
  try {
    const r = await getJson<{ name?: string; root?: string }>('api/instance');
    projectName.value = r.body?.name ?? r.body?.root?.split('/').filter(Boolean).pop() ?? null;
  } catch {}
}
