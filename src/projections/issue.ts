/**
 * The Issue shape of spec §2.1: one shape for every store. Nothing downstream of an adapter branches on
 * `store`.
 */
export interface Reply {
  readonly by: string;
  readonly at: string;
  readonly body: string;
  /** Present only on a remark: the mutable resolved bit. */
  readonly resolved?: boolean;
  /** Present only on a remark: the reading it was authored against. */
  readonly reading?: string;
  /** A retracted reply keeps its place (numbers never shift) and is marked, never removed. */
  readonly retracted?: boolean;
  /** The evidence this reply carried (absent when it carried none); `Issue.evidence` is every reply's, deduplicated. */
  readonly evidence?: readonly string[];
}

/** A change of the issue itself, for its timeline: who opened, edited, closed, reopened or promoted it, and when. */
export interface IssueEvent {
  readonly type: 'opened' | 'edited' | 'closed' | 'reopened' | 'promoted';
  readonly by: string;
  readonly at: string;
  /** On `closed`: the session whose merged change closed it. */
  readonly session?: string;
}

export interface Label {
  readonly name: string;
  /** Display colors supplied by the host, hex without `#`. */
  readonly color?: string;
  readonly textColor?: string;
}

export interface Issue {
  readonly id: string;
  readonly store: string;
  readonly concern: string;
  readonly by: string;
  /** The issue's own lifecycle: `open` | `landed` locally; what the forge says for a forge issue. */
  readonly status: string;
  readonly nodes: readonly string[];
  readonly created: string;
  readonly body: string;
  readonly replies: readonly Reply[];
  readonly evidence: readonly string[];
  readonly labels: readonly Label[];
  readonly url?: string;
  /** A local thread whose concern or body was edited: the latest edit (every version stays in git). */
  readonly edited?: { readonly at: string; readonly by: string };
  /** A local thread's own changes in order (opened, edited, closed, reopened, promoted); replies are in `replies`. */
  readonly events?: readonly IssueEvent[];
}

/** The per-node board entry: slim on purpose, the freshness stamp carries change detection. */
export interface SlimIssue {
  readonly id: string;
  readonly store: string;
  readonly concern: string;
  readonly status: string;
  readonly created: string;
}
