import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { TrellisError } from '../../events/index.js';
import { nodeIdOf, parseSpecNode, type SpecNode } from '../../projections/spec-node.js';
import { isCode } from '../git/refs.js';

/** The spec tree as the file system holds it now (working tree, not git): the live read. */
export interface SpecTree {
  /** Sorted by id. */
  readonly nodes: readonly SpecNode[];
  readonly byId: ReadonlyMap<string, SpecNode>;
}

/**
 * Reads every node under `<root>/<specRoot>`. A missing spec root is an empty tree; a node whose front
 * matter does not parse carries a `problem` and still serves.
 */
export function readSpecTree(root: string, specRoot: string): SpecTree {
  const base = join(root, specRoot);
  const files: { id: string; path: string }[] = [];
  walk(base, (abs) => {
    const id = nodeIdOf(relative(base, abs).split('\\').join('/'));
    if (id) files.push({ id, path: relative(root, abs) });
  });
  const ids = new Set(files.map((f) => f.id));
  const parentOf = (id: string): string | null => {
    const parts = id.split('/');
    for (let n = parts.length - 1; n > 0; n--) {
      const candidate = parts.slice(0, n).join('/');
      if (ids.has(candidate)) return candidate;
    }
    return null;
  };
  const nodes = files
    .map(({ id, path }) => parseSpecNode(id, path, readFileSync(join(root, path), 'utf8'), parentOf))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { nodes, byId: new Map(nodes.map((n) => [n.id, n])) };
}

function walk(dir: string, visit: (abs: string) => void): void {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    if (isCode(err, 'ENOENT') || isCode(err, 'ENOTDIR')) return;
    throw err;
  }
  for (const e of entries) {
    if (e.name.startsWith('.')) continue;
    const abs = join(dir, e.name);
    if (e.isDirectory()) walk(abs, visit);
    else if (e.isFile() && e.name.endsWith('.md')) visit(abs);
  }
}

export function requireNode(tree: SpecTree, id: string): SpecNode {
  const node = tree.byId.get(id);
  if (!node) throw new TrellisError('NODE_NOT_FOUND', `no spec node '${id}'`);
  return node;
}
