// Shapes the backend answers with. The board and issue shapes are the server's own projection types.
export type { Board, BoardNode, BoardOverlay, Freshness, Issue, Reply, SlimIssue, Label } from '../../projections/index.js';

export interface IssueList {
  readonly issues: import('../../projections/index.js').Issue[];
  readonly stores: string[];
  readonly problems: { store?: string; message?: string; [k: string]: unknown }[];
}

export interface HistoryEntry {
  readonly hash: string;
  readonly author: string;
  readonly date: string;
  readonly subject: string;
  readonly path: string;
  readonly previousPath?: string;
  readonly change: string;
}

export interface VersionDiff {
  readonly hash: string;
  readonly path: string;
  readonly previousPath?: string;
  readonly change: string;
  readonly additions: number;
  readonly deletions: number;
  readonly diff: string;
}

export interface EditDelta {
  readonly node: string;
  readonly worktree: string;
  readonly forkPoint: string | null;
  readonly path: string;
  readonly state: string;
  readonly additions: number;
  readonly deletions: number;
  readonly diff: string;
}

export interface SpecLite {
  readonly id: string;
  readonly title: string;
  readonly body: string;
}

export type { SessionSummary, SessionView, TimelineEntry, Scoreboard, ScenarioRow, ScoreCell, ScopeInfo, RemarkRef } from '../../projections/index.js';

/** GET /api/sessions/:id/review (the server's `ReviewBundle`, `src/store/sessions/review.ts`, which this page cannot import: it does I/O). */
export interface ReviewBundle {
  readonly session: string;
  readonly branch: string;
  readonly base: string;
  readonly head: string;
  readonly commits: readonly { readonly hash: string; readonly author: string; readonly at: string; readonly subject: string }[];
  readonly files: readonly { readonly path: string; readonly status: string; readonly diff: string }[];
  readonly nodes: readonly { readonly id: string; readonly openIssues: readonly { readonly id: string; readonly concern: string }[] }[];
  readonly preflight: {
    readonly trunk: string;
    readonly trunkHead: string;
    readonly result: 'clean' | 'conflicts';
    readonly conflicts: readonly string[];
    readonly trunkMovedAhead: boolean;
  };
}

/** POST /api/sessions/:id/prompt: 200 delivered, 202 appended but not delivered (with the reason). */
export interface PromptResult {
  readonly appended: boolean;
  readonly delivered: boolean;
  readonly reason?: string;
}
