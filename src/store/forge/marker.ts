import { isNodeId } from '../../events/index.js';

/** The body marker line that binds a forge issue to spec nodes: `Spec: auth/login, billing`. */
const MARKER = /^[ \t]*spec:[ \t]*(.*)$/im;

/** The nodes a marker line names (comma or space separated), and the body without that line. */
export function readMarker(body: string): { nodes: string[]; body: string } {
  const m = MARKER.exec(body);
  if (!m) return { nodes: [], body };
  const nodes = [...new Set(m[1]!.split(/[\s,]+/).map((s) => s.replace(/^\[\[|\]\]$/g, '')).filter(isNodeId))];
  const stripped = (body.slice(0, m.index) + body.slice(m.index + m[0].length)).replace(/\n{3,}/g, '\n\n').trim();
  return { nodes, body: stripped };
}

/** A body carrying the marker line for `nodes` (no line when there are none). */
export function withMarker(body: string, nodes: readonly string[]): string {
  const text = body.trimEnd();
  return nodes.length ? `${text}${text ? '\n\n' : ''}Spec: ${nodes.join(', ')}` : text;
}

/** Issue numbers a pull request's body refers to: `#12`, `owner/repo#12`, or an issues URL. */
export function referencedIssues(body: string, repo: string): number[] {
  const found = new Set<number>();
  for (const m of body.matchAll(/(?:^|[\s(])(?:([\w.-]+\/[\w.-]+))?#([1-9][0-9]*)\b/g)) if (!m[1] || m[1].toLowerCase() === repo.toLowerCase()) found.add(Number(m[2]));
  for (const m of body.matchAll(/\/([\w.-]+\/[\w.-]+)\/issues\/([1-9][0-9]*)/g)) if (m[1]!.toLowerCase() === repo.toLowerCase()) found.add(Number(m[2]));
  return [...found];
}
