import { TrellisError } from '../../events/index.js';
import { unknownNodeWords } from '../../projections/nearest-names.js';
import type { IssuesProject } from './issues-project.js';

/**
 * One rule for unknown nodes on every surface (CLI, API, page): an issue names only nodes the spec tree
 * has, and a node it does not have is refused with the nearest names (404 `NODE_NOT_FOUND`), before
 * anything is written. A node yet to be written is named once its file exists (the main checkout's spec
 * root, committed or not, is what is read). Nodes a body links with `[[…]]` are the body's words, never refused.
 */
export async function requireKnownNodes(p: IssuesProject, nodes: readonly string[]): Promise<void> {
  if (!nodes.length || !p.root) return;
  const { specRoot } = p.settings();
  // Loaded only when an issue names nodes: a plain open reads no spec code (CLI start-up, issue 8).
  const { readSpecTree } = await import('../spec/spec-tree.js');
  const known = [...readSpecTree(p.root, specRoot).byId.keys()];
  const have = new Set(known);
  const missing = nodes.filter((n) => !have.has(n));
  if (!missing.length) return;
  throw new TrellisError('NODE_NOT_FOUND', `${missing.map((n) => unknownNodeWords(n, known, specRoot)).join('; ')} ('trellis board' lists the nodes; name a new node once its file exists)`, {
    details: { unknown: missing },
  });
}
