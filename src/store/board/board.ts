import { assembleBoard, boardBytes, sessionList, specMeta, trunkOutcomes, type Board } from '../../projections/index.js';
import type { ThreadsRead } from '../issues/thread-store.js';
import { mergedFrom, nodeIssuesFrom } from '../issues/merged-list.js';
import type { SessionsProject } from '../sessions/log/sessions-project.js';
import { requireRoot } from '../project/repository.js';
import { readSpecTree, type SpecTree } from '../spec/spec-tree.js';
import { overlapsBetween } from '../sessions/checks/overlap-pairs.js';
import { worktreeOverlay, type OverlayEntry } from '../spec/worktrees.js';

/** Where a board's parts come from; the server swaps in watched, memoized sources, the CLI reads fresh. */
export interface BoardSources {
  specTree(): SpecTree;
  overlay(specRoot: string, trunk: string | null): Promise<OverlayEntry[]>;
}

export const freshSources = (p: SessionsProject): BoardSources => ({
  specTree: () => readSpecTree(requireRoot(p), p.settings().specRoot),
  overlay: (specRoot, trunk) => worktreeOverlay(requireRoot(p), p.gitdir, specRoot, trunk),
});

/** Builds the board from the current state of everything it shows; the one builder for CLI and HTTP. */
export async function buildBoard(
  p: SessionsProject,
  sources: BoardSources = freshSources(p),
  readThreads: () => Promise<ThreadsRead> = () => p.threads.all(),
): Promise<{ board: Board; bytes: string; notes: readonly string[] }> {
  const root = requireRoot(p);
  const { specRoot, trunk } = p.settings();
  // The CLI pulls the forges first; the server's slice is kept current in the background.
  const pulled = p.forgeReads === 'live' ? await p.forges.refresh() : null;
  const notes = pulled ? [...pulled.failures, ...pulled.notes] : [];
  // The reads are independent: the worktrees' git runs go on while the logs are read (issue 40).
  const sessionsRead = p.sessionLog.all();
  const [read, sessions, overlay, evals, overlapsOf] = await Promise.all([
    readThreads(),
    sessionsRead,
    sources.overlay(specRoot, trunk),
    p.evals.all(),
    sessionsRead.then((s) => overlapsBetween(p, s.states)),
  ]);
  const list = mergedFrom(p, read);
  const tree = sources.specTree();
  const board = assembleBoard({
    specRoot,
    nodes: tree.nodes.map(specMeta),
    scenarios: trunkOutcomes(tree.nodes.flatMap((n) => n.scenarios), evals.states),
    overlay,
    // A session overlapping another live one says with which, and where (only then: the bytes stay as they were otherwise).
    sessions: sessionList(sessions.states).map((s) => {
      const o = overlapsOf(s.id);
      return o.length ? { ...s, overlaps: o } : s;
    }),
    issues: list.issues,
    freshness: list.freshness,
    sliceOf: nodeIssuesFrom(p, read),
  });
  return { board, bytes: boardBytes(board), notes };
}
