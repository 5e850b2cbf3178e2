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
