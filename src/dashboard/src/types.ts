// Shapes the backend answers with. The board and issue shapes are the server's own projection types.
export type { Board, BoardNode, BoardOverlay, Freshness, Issue, IssueEvent, IssueTimeline, Reply, SlimIssue, Label } from '../../projections/index.js';

export interface IssueList {
  readonly issues: import('../../projections/index.js').Issue[];
  readonly stores: string[];
  readonly problems: { store?: string; message?: string; [k: string]: unknown }[];
  /** Forges the server does not use, each with which entry and why (a refused token destination, a broken config). */
  readonly notes?: readonly string[];
}

/** A node's history and one version's diff: the server's own shapes (`GET /api/specs/:id/history`, `.../diff/:hash`). */
export type { SpecVersion as HistoryEntry, SpecDiff as VersionDiff } from '../../projections/spec-version.js';

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

export type { OverlapWith, SessionSummary, SessionView, SessionCost, UsageView, CostReport, ProjectSpend, TimelineEntry, Scoreboard, ScenarioRow, ScoreCell, ScopeInfo, RemarkRef } from '../../projections/index.js';

/** GET /api/sessions/:id/review: the server's own shape. */
export type { BringTrunkIn, ReviewBundle } from '../../projections/review-bundle.js';

/** POST /api/sessions/:id/prompt: 200 delivered, 202 appended but not delivered (with the reason). */
export interface PromptResult {
  readonly appended: boolean;
  readonly delivered: boolean;
  readonly reason?: string;
  /** Delivered after waiting for an empty input box: what it held. */
  readonly waited?: string;
}

/** GET /api/resources: the host's inventory and the session budget. */
export type { ResourceInventory } from '../../projections/resources.js';
