/** A spec node id: the path below the spec root without `.md`, e.g. `auth/login` (DESIGN.md §4). */
const NODE_ID = /^[A-Za-z0-9_][A-Za-z0-9_.-]*(\/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$/;

/** Longest node id: it becomes a path below the spec root, and a file name has to fit the file system. */
export const MAX_NODE_ID = 512;
export const isNodeId = (s: string): boolean => s.length <= MAX_NODE_ID && NODE_ID.test(s) && !s.split('/').some((p) => p === '..' || p.endsWith('.md'));

const LINK = /\[\[([^\[\]\n|]+?)(?:\|[^\]\n]*)?\]\]/g;

/** The `[[node-id]]` links in prose (an optional `|label` after the id is ignored), deduped, in order. */
export function nodeLinks(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(LINK)) {
    const id = m[1]!.trim();
    if (isNodeId(id) && !found.includes(id)) found.push(id);
  }
  return found;
}

/** An issue's nodes: the author's prose links unioned with explicit ids, explicit ones first. */
export const issueNodes = (explicit: readonly string[], prose: string): string[] => [...new Set([...explicit, ...nodeLinks(prose)])];
