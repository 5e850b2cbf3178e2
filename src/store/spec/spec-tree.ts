import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { isNodeId, TrellisError } from '../../events/index.js';
import { uniqueScenarios } from '../../projections/scenarios.js';
import { nodeIdOf, parseSpecNode, type SpecNode } from '../../projections/spec-node.js';
import { readYaml } from './read-yaml.js';
import { isCode } from '../fs-errors.js';
import { isBelow, MAX_PATH_INPUT } from '../safe-path.js';

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
/** Parsed files by path, keyed on what a write changes (mtime, size, inode): a long-running reader's memo. */
export type SpecFileMemo = Map<string, { stamp: string; parentKey: string; node: SpecNode }>;

export function readSpecTree(root: string, specRoot: string, memo?: SpecFileMemo): SpecTree {
  const base = join(root, specRoot);
  // A spec root that is (or runs through) a symlink out of the project serves nothing from there.
  if (!isBelow(root, base)) throw new TrellisError('INVALID_INPUT', `the spec root ${specRoot} resolves outside the project; point "specRoot" in trellis.json at a folder inside it`);
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
  const parse = ({ id, path }: { id: string; path: string }): SpecNode => {
    const abs = join(root, path);
    if (!memo) return parseSpecNode(id, path, readFileSync(abs, 'utf8'), parentOf, readYaml);
    const st = statSync(abs, { bigint: true });
    const stamp = `${st.mtimeNs}:${st.size}:${st.ino}`;
    // A node's parent depends on which folder nodes exist, so it is part of the key too.
    const parentKey = String(parentOf(id));
    const hit = memo.get(path);
    if (hit && hit.stamp === stamp && hit.parentKey === parentKey) return hit.node;
    const node = parseSpecNode(id, path, readFileSync(abs, 'utf8'), parentOf, readYaml);
    memo.set(path, { stamp, parentKey, node });
    return node;
  };
  // Scenario ids are unique across the tree: a later duplicate is dropped and becomes its node's problem.
  const nodes = uniqueScenarios(files.map(parse).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)));
  if (memo) {
    const present = new Set(files.map((f) => f.path));
    for (const path of memo.keys()) if (!present.has(path)) memo.delete(path);
  }
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
  const node = isNodeId(id) && id.length <= MAX_PATH_INPUT ? tree.byId.get(id) : undefined;
  if (!node) throw new TrellisError('NODE_NOT_FOUND', `no spec node '${id}'`);
  return node;
}
