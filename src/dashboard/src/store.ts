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
 * Bumped on a change that can move every session's review: a reading filed, the spec tree, the config, a
 * resync, and the page's own actions (the review bundle, its banner and its checks table refetch on it).
 * What moves one session's review only (its branch, trunk, its own state) is `branchRevision`'s and the
 * session read's: another session's hook event or an issue write never reads a bundle again.
 */
export const gateRevision = signal(0);
const MOVES_EVERY_REVIEW = new Set(['evals', 'specs', 'resync', 'config']);
/** Bumped when spec files change (the search corpus and node bodies refetch on it). */
export const specRevision = signal(0);

/** The ids a change event names, by stream kind (`moved` on the stream; a kind absent moved unnamed). */
type Moved = Partial<Record<'issues' | 'sessions' | 'evals' | 'branches', string[]>>;
const STREAM_CAUSES = new Set(['issues', 'sessions', 'evals']);

/**
 * Per stream (`issues a1`, `sessions s1`), a revision bumped on each change that may have moved it, and
 * per kind one bumped on changes that moved it without naming which (any of its streams may have).
 */
const streamRevisions = new Map<string, number>();
const kindRevisions = new Map<string, number>();
/** Bumped with every stream revision, so a view reading `streamRevision` re-renders. */
const streamTick = signal(0);

/** What a view that shows one stream refetches on: changes only when a change may have moved it. */
export function streamRevision(kind: 'issues' | 'sessions', id: string): string {
  void streamTick.value;
  return `${kindRevisions.get(kind) ?? 0} ${streamRevisions.get(`${kind} ${id}`) ?? 0}`;
}

const bump = (m: Map<string, number>, key: string) => m.set(key, (m.get(key) ?? 0) + 1);

/** What a view that reads a branch (a session's review: its branch, trunk) refetches on: its tip moved. */
export function branchRevision(name: string): number {
  void streamTick.value;
  return streamRevisions.get(`branches ${name}`) ?? 0;
}

/**
 * What a view showing a session's overlaps refetches on: any worktree's branch moved (another live session's
 * commit can make or end an overlap with this one; the stream names branches, not who overlaps whom).
 */
export function worktreeRevision(): number {
  void streamTick.value;
  return kindRevisions.get('worktrees') ?? 0;
}

function noteStreams(causes: string[], moved: Moved): void {
  // The forge's issues, a config or a resync name nothing: every issue (and on the last two every session) may have moved.
  const broad = causes.some((c) => c === 'resync' || c === 'config');
  if (broad || causes.includes('forge')) bump(kindRevisions, 'issues');
  if (broad) bump(kindRevisions, 'sessions');
  for (const kind of ['issues', 'sessions'] as const) {
    if (!causes.includes(kind)) continue;
    const ids = moved[kind];
    if (!ids) bump(kindRevisions, kind);
    else for (const id of ids) bump(streamRevisions, `${kind} ${id}`);
  }
  // A worktrees change names the branches whose tips moved (none: a worktree added, removed or switched).
  if (causes.includes('worktrees')) {
    for (const b of moved.branches ?? []) bump(streamRevisions, `branches ${b}`);
    bump(kindRevisions, 'worktrees');
  }
  if (causes.some((c) => MOVES_EVERY_REVIEW.has(c))) gateRevision.value++;
  streamTick.value++;
}

/**
 * A view that shows one stream and keeps the board's part of it current itself (the thread page, the
 * session page): while one is shown, a change that moved only streams it covers patches the board's
 * freshness from the event instead of refetching the board, which is refetched once the view goes.
 */
interface Narrow {
  readonly covers: (kind: string, id: string) => boolean;
}
const narrows = new Set<Narrow>();
let boardBehind = false;

/** Registers a narrow view; returns its release (refetches the board if a change was left to it). */
export function narrowBoard(covers: Narrow['covers']): () => void {
  const n: Narrow = { covers };
  narrows.add(n);
  return () => {
    narrows.delete(n);
    if (boardBehind && narrows.size === 0) {
      // What was left to the view is news to every other one (the issue list is cached per revision).
      boardBehind = false;
      revision.value++;
      gateRevision.value++;
      void refreshBoard();
    }
  };
}

/** Whether every stream the change moved is named and covered by a shown narrow view. */
function covered(causes: string[], moved: Moved): boolean {
  if (narrows.size === 0 || causes.length === 0) return false;
  return causes.every((c) => {
    if (!STREAM_CAUSES.has(c)) return false;
    const ids = moved[c as keyof Moved];
    return !!ids && ids.every((id) => [...narrows].some((n) => n.covers(c, id)));
  });
}

/** A session page's read of its session, patched into the board's entry (the header counts read it). */
export function patchBoardSession(view: Record<string, unknown> & { id: string }): void {
  const b = board.value;
  const i = b?.sessions.findIndex((s) => s.id === view.id) ?? -1;
  if (!b || i < 0) return;
  const entry = b.sessions[i] as unknown as Record<string, unknown>;
  const next = Object.fromEntries(Object.keys(entry).map((k) => [k, k in view ? view[k] : entry[k]]));
  if (JSON.stringify(next) === JSON.stringify(entry)) return;
  const sessions = [...b.sessions];
  sessions[i] = next as unknown as (typeof b.sessions)[number];
  board.value = { ...b, sessions };
}

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
      bump(kindRevisions, 'issues');
      bump(kindRevisions, 'sessions');
      streamTick.value++;
      revision.value++;
      gateRevision.value++;
      specRevision.value++;
      void refreshBoard();
    },
    graph: (data) => {
      let cause = '';
      let causes: string[] = [];
      let moved: Moved = {};
      let freshness: Board['freshness'] | undefined;
      try {
        const d = JSON.parse(data) as { cause?: string; causes?: string[]; moved?: Moved; freshness?: Board['freshness'] };
        cause = d.cause ?? '';
        causes = d.causes ?? [cause];
        moved = d.moved ?? {};
        freshness = d.freshness;
      } catch {}
      if (cause === 'specs' || cause === 'resync') specRevision.value++;
      noteStreams(causes, moved);
      if (covered(causes, moved) && board.value && freshness) {
        // The shown view reads what moved itself; the board catches up when it goes.
        board.value = { ...board.value, freshness };
        boardBehind = true;
        return;
      }
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
