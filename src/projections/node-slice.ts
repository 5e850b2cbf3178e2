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
  // Linear in the bound pairs: one Set of ids per node instead of a scan of its list per issue (10,000
  // issues on one node were 257 ms; a node id like `__proto__` is a plain key of a prototype-free record).
  const out: Record<string, { issues: SlimIssue[]; openIssues: SlimIssue[] }> = Object.create(null);
  const seen = new Map<string, Set<string>>();
  for (const issue of merged) {
    const s = slim(issue);
    for (const node of issue.nodes) {
      let ids = seen.get(node);
      if (!ids) {
        seen.set(node, (ids = new Set()));
        out[node] = { issues: [], openIssues: [] };
      }
      if (ids.has(s.id)) continue;
      ids.add(s.id);
      const entry = out[node]!;
      entry.issues.push(s);
      if (issue.status === 'open') entry.openIssues.push(s);
    }
  }
  return out;
}

/** One node's slice from its issues already in merged order, each listed once (an incremental index keeps them so). */
export function sliceOf(issues: readonly Issue[]): NodeIssues {
  const all = issues.map(slim);
  return { issues: all, openIssues: all.filter((_, i) => issues[i]!.status === 'open') };
}
