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
}

/**
 * A change of the issue itself, for its timeline: who opened, edited, closed, reopened or promoted it, and
 * when. Not a field of the Issue (spec §2.1 is the Issue's whole shape): the timeline is its own read,
 * `IssueTimeline`, of the same shape for a local thread and a forge issue (from the forge's own timeline).
 */
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
}

/** The timeline read of one issue (`trellis issue timeline`, GET /api/issues/:id/timeline): its own changes, oldest first. */
export interface IssueTimeline {
  readonly id: string;
  /** opened first; then edited, closed, reopened, promoted as they happened. Replies are the Issue's `replies`. */
  readonly events: readonly IssueEvent[];
  /**
   * Which reply carried which evidence, by reply number (from 1): `{"2": [hash]}`. Not a Reply field (spec §2.1
   * rule 3: a reply is `{by, at, body}` in every store); a forge reply carries none, so a forge issue's is `{}`.
   */
  readonly carried: Readonly<Record<string, readonly string[]>>;
  /** What could not be read (a forge that did not answer, an event it wrote that the driver cannot read). */
  readonly notes: readonly string[];
}

/** The per-node board entry: slim on purpose, the freshness stamp carries change detection. */
export interface SlimIssue {
  readonly id: string;
  readonly store: string;
  readonly concern: string;
  readonly status: string;
  readonly created: string;
}
