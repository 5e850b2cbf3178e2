import type { Issue, SlimIssue } from './issue.js';

export interface NodeIssues {
  readonly issues: readonly SlimIssue[];
  readonly openIssues: readonly SlimIssue[];
}

const slim = (i: Issue): SlimIssue => ({ id: i.id, store: i.store, concern: i.concern, status: i.status, created: i.created });

/**
 * The per-node slice of the board (spec §2.1 rule 7): for each node an issue is bound to, the merged
 * `issues` (in the order given, which is the merged order) and the open subset `openIssues`.
 */
export function nodeSlice(merged: readonly Issue[]): Record<string, NodeIssues> {
  const out: Record<string, { issues: SlimIssue[]; openIssues: SlimIssue[] }> = {};
  for (const issue of merged) {
    const s = slim(issue);
    for (const node of issue.nodes) {
      const entry = (out[node] ??= { issues: [], openIssues: [] });
      if (entry.issues.some((x) => x.id === s.id)) continue;
      entry.issues.push(s);
      if (issue.status === 'open') entry.openIssues.push(s);
    }
  }
  return out;
}
