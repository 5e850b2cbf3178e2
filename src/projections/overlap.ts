/*
 * Parallel sessions see each other (DESIGN.md §14): two live sessions whose changes touch one spec node
 * or one file overlap, and each is told which other session and which paths. The index is updated one
 * session at a time: setting a session's changes recomputes its pairs only, never all pairs.
 */

/** What one live session changes: files (from its base, committed or not) and the spec nodes among them. */
export interface SessionChangeSet {
  readonly session: string;
  readonly paths: readonly string[];
  readonly nodes: readonly string[];
}

/** Another live session this one overlaps, and where. */
export interface OverlapWith {
  readonly session: string;
  readonly nodes: readonly string[];
  readonly paths: readonly string[];
}

export class OverlapIndex {
  private readonly changes = new Map<string, SessionChangeSet>();
  private readonly byPath = new Map<string, Set<string>>();
  private readonly byNode = new Map<string, Set<string>>();

  /** Replaces one session's changes: only its own entries move. */
  set(c: SessionChangeSet): void {
    this.remove(c.session);
    this.changes.set(c.session, c);
    for (const path of c.paths) add(this.byPath, path, c.session);
    for (const node of c.nodes) add(this.byNode, node, c.session);
  }

  remove(session: string): void {
    const old = this.changes.get(session);
    if (!old) return;
    this.changes.delete(session);
    for (const path of old.paths) drop(this.byPath, path, session);
    for (const node of old.nodes) drop(this.byNode, node, session);
  }

  has(session: string): boolean {
    return this.changes.has(session);
  }

  sessions(): string[] {
    return [...this.changes.keys()];
  }

  /** The sessions `session` overlaps, by id, each with the shared nodes and paths (sorted). */
  overlapsOf(session: string): OverlapWith[] {
    const mine = this.changes.get(session);
    if (!mine) return [];
    const found = new Map<string, { nodes: string[]; paths: string[] }>();
    const entry = (other: string) => found.get(other) ?? found.set(other, { nodes: [], paths: [] }).get(other)!;
    for (const node of mine.nodes) for (const other of this.byNode.get(node) ?? []) if (other !== session) entry(other).nodes.push(node);
    for (const path of mine.paths) for (const other of this.byPath.get(path) ?? []) if (other !== session) entry(other).paths.push(path);
    return [...found]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([other, o]) => ({ session: other, nodes: o.nodes.sort(), paths: o.paths.sort() }));
  }

  /** The live sessions changing `node`, with the paths under it they change. */
  changing(node: string): SessionChangeSet[] {
    return [...(this.byNode.get(node) ?? [])].sort().map((s) => this.changes.get(s)!);
  }
}

function add(map: Map<string, Set<string>>, key: string, session: string): void {
  const set = map.get(key);
  if (set) set.add(session);
  else map.set(key, new Set([session]));
}

function drop(map: Map<string, Set<string>>, key: string, session: string): void {
  const set = map.get(key);
  if (!set) return;
  set.delete(session);
  if (set.size === 0) map.delete(key);
}
