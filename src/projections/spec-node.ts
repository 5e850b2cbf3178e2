import { isNodeId, nodeLinks } from '../events/index.js';
import { parseScenarios, type ScenarioDecl } from './scenarios.js';

/** A `## ` section of a node. */
export interface SpecPart {
  readonly title: string;
  readonly body: string;
}

/** What the board and the spec list carry for a node: everything but its prose. */
export interface SpecNodeMeta {
  readonly id: string;
  /** Path of the file relative to the project root. */
  readonly path: string;
  readonly title: string;
  readonly status: string | null;
  readonly depends: readonly string[];
  /** The folder node above this one, when there is one. */
  readonly parent: string | null;
  /** `[[node-id]]` links in the prose. */
  readonly links: readonly string[];
  /** Why the node's front matter could not be read; the rest of the node still serves. */
  readonly problem?: string;
}

export interface SpecNode extends SpecNodeMeta {
  /** The Markdown after the front matter. */
  readonly body: string;
  readonly parts: readonly SpecPart[];
  /** Eval scenarios its front matter declares (DESIGN.md §12). */
  readonly scenarios: readonly ScenarioDecl[];
}

/** The node id of a spec file, given its path below the spec root: `auth/login.md` → `auth/login`, `auth/index.md` → `auth`. */
export function nodeIdOf(relPath: string): string | null {
  if (!relPath.endsWith('.md')) return null;
  const bare = relPath.slice(0, -3);
  const id = bare === 'index' ? 'index' : bare.endsWith('/index') ? bare.slice(0, -6) : bare;
  return isNodeId(id) ? id : null;
}

/** A YAML parser (yaml's `parse`): the store passes one it loads on first use, so a verb that reads no spec node never loads it. */
export type ReadYaml = (text: string) => unknown;

/** Parses one spec file. Pure: the caller reads the file, and gives the YAML parser for its front matter. */
export function parseSpecNode(id: string, path: string, text: string, parentOf: (id: string) => string | null, readYaml: ReadYaml): SpecNode {
  const { front, body, problem: fmProblem } = splitFrontMatter(text, readYaml);
  let problem = fmProblem;
  const field = <T>(key: string, ok: (v: unknown) => v is T): T | undefined => {
    const v = front[key];
    if (v === undefined || v === null) return undefined;
    if (ok(v)) return v;
    problem ??= `front matter: "${key}" has the wrong type`;
    return undefined;
  };
  const title = field('title', isString) ?? firstHeading(body) ?? id.split('/').pop()!;
  const status = field('status', isString) ?? null;
  const depends = field('depends', isStringList) ?? [];
  const badDep = depends.find((d) => !isNodeId(d));
  if (badDep !== undefined) problem ??= `front matter: depends names '${badDep}', which is not a node id`;
  const declared = parseScenarios(id, front.scenarios);
  if (declared.problem) problem ??= declared.problem;
  return {
    id,
    path,
    title,
    status,
    depends: depends.filter(isNodeId),
    parent: parentOf(id),
    links: nodeLinks(body),
    ...(problem ? { problem } : {}),
    body,
    parts: partsOf(body),
    scenarios: declared.scenarios,
  };
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every(isString);

function splitFrontMatter(text: string, parseYaml: ReadYaml): { front: Record<string, unknown>; body: string; problem?: string } {
  const src = text.replace(/^\uFEFF/, '');
  if (!/^---\r?\n/.test(src)) return { front: {}, body: src };
  const end = /\r?\n---[ \t]*(\r?\n|$)/.exec(src.slice(3));
  if (!end) return { front: {}, body: src, problem: 'front matter: opened with --- but never closed' };
  const yamlText = src.slice(src.indexOf('\n') + 1, 3 + end.index);
  const body = src.slice(3 + end.index + end[0].length);
  let front: unknown;
  try {
    front = parseYaml(yamlText);
  } catch (err) {
    return { front: {}, body, problem: `front matter: ${(err as Error).message.split('\n')[0]}` };
  }
  if (front === null || front === undefined) return { front: {}, body };
  if (typeof front !== 'object' || Array.isArray(front)) return { front: {}, body, problem: 'front matter: must be a mapping of keys to values' };
  return { front: front as Record<string, unknown>, body };
}

function firstHeading(body: string): string | undefined {
  const m = /^#[ \t]+(.+?)[ \t#]*$/m.exec(body);
  return m?.[1];
}

/** The `## ` sections, outside fenced code blocks. Text before the first one is not a part. */
export function partsOf(body: string): SpecPart[] {
  const parts: { title: string; lines: string[] }[] = [];
  let fence: string | null = null;
  for (const line of body.split(/\r?\n/)) {
    const f = /^(```|~~~)/.exec(line);
    if (f) fence = fence === null ? f[1]! : fence === f[1] ? null : fence;
    const h = fence === null ? /^##[ \t]+(.+?)[ \t#]*$/.exec(line) : null;
    if (h) parts.push({ title: h[1]!, lines: [] });
    else parts.at(-1)?.lines.push(line);
  }
  return parts.map((p) => ({ title: p.title, body: p.lines.join('\n').trim() }));
}

/** Strips the prose: what the board and the spec list carry. */
export function specMeta(node: SpecNode): SpecNodeMeta {
  const { body: _body, parts: _parts, scenarios: _scenarios, ...meta } = node;
  return meta;
}
