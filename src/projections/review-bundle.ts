import type { UsageView } from './session-usage.js';
// The review bundle of a session as `GET /api/sessions/:id/review` answers it; pure, so the dashboard
// imports it too (the store's review.ts builds it with git).

import type { MergeByHand } from './merge-by-hand.js';
import type { SessionChecks } from './session-checks.js';

export interface ReviewCommit {
  readonly hash: string;
  readonly author: string;
  readonly at: string;
  readonly subject: string;
}

export interface ReviewFile {
  readonly path: string;
  /** git's status letter: A added, M modified, D deleted, R renamed, ... */
  readonly status: string;
  /** The file's unified diff from the merge base (`git diff trunk...head`). */
  readonly diff: string;
}

export interface ReviewNode {
  readonly id: string;
  readonly openIssues: readonly { readonly id: string; readonly concern: string }[];
}

/** The merge pre-flight: would the branch merge into trunk as it is now? */
export interface Preflight {
  readonly trunk: string;
  readonly trunkHead: string;
  /** `clean`: merges without conflict; `conflicts`: these paths conflict. */
  readonly result: 'clean' | 'conflicts';
  readonly conflicts: readonly string[];
  /** Trunk has commits the branch lacks (`head..trunk`): bringing trunk in clears it. */
  readonly trunkMovedAhead: boolean;
  /** Whether the merge gate lets the merge through (DESIGN.md §14). */
  readonly ready: boolean;
  /** The gate's line: ready, or what blocks it and how to go on. */
  readonly checks: string;
  /**
   * The branch is already in trunk (its tip, with at least one commit, is an ancestor of trunk's tip): the
   * trunk commit that brought it in (the merge commit, or the tip itself after a fast-forward). Then the
   * verdicts above describe the branch before its merge, and nothing about merging it applies any more.
   */
  readonly merged: { readonly commit: string } | null;
  /** A conflict's one next action (null without one): trunk brought into the branch, by the agent or in the shell's terminal. */
  readonly bringTrunkIn: BringTrunkIn | null;
  /**
   * A session whose agent reads no prose (a `shell`) is merged by a person: where (the main checkout's
   * absolute path) and the commands (merge-by-hand.ts, the CLI's refusal's own). Null when its agent
   * merges, or once the branch is in trunk.
   */
  readonly mergeByHand: MergeByHand | null;
}

/** Bring trunk into the branch: a prompt for an agent that reads prose, else the exact command for the session's terminal. */
export type BringTrunkIn = { readonly prompt: string } | { readonly command: string };

/** The review bundle of a session: everything a reviewer needs before merging (DESIGN.md §9). */
export interface ReviewBundle {
  readonly session: string;
  readonly branch: string;
  /** The diff's base: the merge base of head and trunk as it is now (`git diff trunk...head`); see store/sessions/worktrees/branch-range.ts. */
  readonly base: string;
  readonly head: string;
  readonly commits: readonly ReviewCommit[];
  readonly files: readonly ReviewFile[];
  readonly nodes: readonly ReviewNode[];
  readonly preflight: Preflight;
  /** The session's checks: per scenario its reading at the head commit, trunk's latest, and the verdict; overrides of the gate. */
  readonly checks: SessionChecks & { readonly notes: readonly string[] };
  /** What this change cost: the session's model use so far (issue 42), or `{none}` for a shell. */
  readonly cost: UsageView;
}

/** A file's diff longer than this many lines is folded in the review bundle (its summary says how long). */
export const LONG_DIFF_LINES = 60;

/** What a file's diff summary says: lines added and removed, and whether the diff is long enough to fold. */
export function diffSize(diff: string): { readonly additions: number; readonly deletions: number; readonly lines: number; readonly long: boolean } {
  let additions = 0;
  let deletions = 0;
  const rows = diff ? diff.replace(/\n$/, '').split('\n') : [];
  for (const l of rows) {
    if (l.startsWith('+') && !l.startsWith('+++')) additions++;
    else if (l.startsWith('-') && !l.startsWith('---')) deletions++;
  }
  return { additions, deletions, lines: rows.length, long: rows.length > LONG_DIFF_LINES };
}
