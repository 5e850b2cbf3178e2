import type { Freshness } from './freshness.js';
import type { Issue, SlimIssue } from './issue.js';
import { nodeSlice, type NodeIssues } from './node-slice.js';
import type { ScenarioOutcome } from './scoreboard.js';
import type { OverlapWith } from './overlap.js';
import type { SessionSummary } from './session-list.js';
import type { SpecNodeMeta } from './spec-node.js';

/**
 * Board format versions (`version`):
 *   1 — initial: nodes with their issue slices, the worktree overlay, sessions, one freshness stamp;
 *       nodes also carry their eval scenarios' latest trunk outcomes (`scenarios`, added without a bump:
 *       a reader that ignores unknown fields is unaffected), and overlay entries the nodes their worktree
 *       adds (`added`, with titles, likewise without a bump).
 */
export const BOARD_VERSION = 1;

export interface BoardNode extends SpecNodeMeta {
  readonly issues: readonly SlimIssue[];
  readonly openIssues: readonly SlimIssue[];
  /** The node's eval scenarios with their latest trunk outcome (slim: id, outcome, reading). */
  readonly scenarios: readonly ScenarioOutcome[];
}

export interface BoardOverlay {
  readonly worktree: string;
  readonly branch: string | null;
  readonly head: string | null;
  readonly forkPoint: string | null;
  readonly nodes: readonly string[];
  /** Nodes whose file the worktree adds, with their titles (absent when none): they exist only there until merged. */
  readonly added?: readonly { readonly id: string; readonly title: string; readonly path: string }[];
}

/** What the board says of a session: its entry in the session list, and the live sessions it overlaps (when it does). */
export type BoardSession = SessionSummary & { readonly overlaps?: readonly OverlapWith[] };

export interface Board {
  readonly version: typeof BOARD_VERSION;
  readonly specRoot: string;
  readonly nodes: readonly BoardNode[];
  readonly overlay: readonly BoardOverlay[];
  readonly sessions: readonly BoardSession[];
  readonly freshness: Freshness;
}

export interface BoardInputs {
  readonly specRoot: string;
  /** Sorted by id. */
  readonly nodes: readonly SpecNodeMeta[];
  readonly overlay: readonly BoardOverlay[];
  readonly sessions: readonly BoardSession[];
  /** The merged issue list, newest first. */
  readonly issues: readonly Issue[];
  readonly freshness: Freshness;
  /** Per node id, its scenarios' latest trunk outcomes. */
  readonly scenarios?: ReadonlyMap<string, readonly ScenarioOutcome[]>;
  /**
   * One node's slice, when the caller keeps them (a server's incremental index): must equal what
   * `nodeSlice(issues)` gives for that node. Without it the slices are computed from `issues`.
   */
  readonly sliceOf?: (node: string) => NodeIssues | undefined;
}

const NONE = { issues: [], openIssues: [] } as const;

/** Assembles the board. Deterministic: the same inputs give the same bytes, wherever it is built. */
export function assembleBoard(inputs: BoardInputs): Board {
  const computed = inputs.sliceOf ? undefined : nodeSlice(inputs.issues);
  const slice = inputs.sliceOf ?? ((node: string) => computed![node]);
  return {
    version: BOARD_VERSION,
    specRoot: inputs.specRoot,
    nodes: inputs.nodes.map((n) => ({ ...n, ...(slice(n.id) ?? NONE), scenarios: inputs.scenarios?.get(n.id) ?? [] })),
    overlay: inputs.overlay,
    sessions: inputs.sessions,
    freshness: inputs.freshness,
  };
}

/** The board's wire bytes: what GET /api/graph answers and `trellis graph --json` prints. */
export const boardBytes = (board: Board): string => `${JSON.stringify(board)}\n`;
