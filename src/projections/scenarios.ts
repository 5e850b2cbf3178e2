import { isScenarioId } from '../events/index.js';

/** How long a scenario's command may run when its declaration does not say (DESIGN.md §12). */
export const DEFAULT_TIMEOUT_S = 600;

/** A scenario as a spec node's front matter declares it: `scenarios: [{ id, run, timeoutS? }]`. */
export interface ScenarioDecl {
  readonly id: string;
  /** The shell command that measures it, run with `sh -c` at the scope's worktree root. */
  readonly run: string;
  readonly timeoutS: number;
  /** The node that declares it. */
  readonly node: string;
}

const KEYS = new Set(['id', 'run', 'timeoutS']);

/**
 * Reads a node's `scenarios:` front matter. Well-formed entries are kept; the first malformed one is
 * reported as the node's problem (its repair named) and left out.
 */
export function parseScenarios(node: string, value: unknown): { scenarios: ScenarioDecl[]; problem?: string } {
  if (value === undefined || value === null) return { scenarios: [] };
  if (!Array.isArray(value)) return { scenarios: [], problem: 'front matter: "scenarios" must be a list of { id, run, timeoutS? }' };
  const scenarios: ScenarioDecl[] = [];
  let problem: string | undefined;
  const seen = new Set<string>();
  value.forEach((entry: unknown, i) => {
    const bad = entryProblem(entry);
    const at = `front matter: scenarios[${i}]`;
    if (bad) {
      problem ??= `${at} ${bad}`;
      return;
    }
    const e = entry as { id: string; run: string; timeoutS?: number };
    if (seen.has(e.id)) {
      problem ??= `${at} repeats the id '${e.id}'; scenario ids are unique across the spec tree`;
      return;
    }
    seen.add(e.id);
    scenarios.push({ id: e.id, run: e.run, timeoutS: e.timeoutS ?? DEFAULT_TIMEOUT_S, node });
  });
  return problem ? { scenarios, problem } : { scenarios };
}

function entryProblem(entry: unknown): string | null {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return 'must be a mapping { id, run, timeoutS? }';
  const e = entry as Record<string, unknown>;
  const extra = Object.keys(e).find((k) => !KEYS.has(k));
  if (extra !== undefined) return `has an unknown key '${extra}' (known: id, run, timeoutS)`;
  if (typeof e.id !== 'string' || !isScenarioId(e.id)) {
    return `has id ${JSON.stringify(e.id)}, which is not a scenario id (segments of letters, digits, _ - and ., joined by /, e.g. checkout/happy-path)`;
  }
  if (typeof e.run !== 'string' || e.run.trim() === '') return `(${e.id}) needs "run": the shell command that measures it`;
  if (e.timeoutS !== undefined && (typeof e.timeoutS !== 'number' || !Number.isFinite(e.timeoutS) || e.timeoutS <= 0)) {
    return `(${e.id}) has timeoutS ${JSON.stringify(e.timeoutS)}; it must be a number of seconds above 0`;
  }
  return null;
}

/**
 * Enforces ids unique across a tree: the first declaration (in node id order) keeps an id, a later one
 * is dropped and becomes a problem of its node. Nodes without a duplicate are returned as they are.
 */
export function uniqueScenarios<N extends { readonly id: string; readonly scenarios: readonly ScenarioDecl[]; readonly problem?: string }>(nodes: readonly N[]): N[] {
  const owner = new Map<string, string>();
  return nodes.map((n) => {
    let problem = n.problem;
    const kept = n.scenarios.filter((s) => {
      const first = owner.get(s.id);
      if (first === undefined) {
        owner.set(s.id, n.id);
        return true;
      }
      problem ??= `front matter: scenario '${s.id}' is already declared by node '${first}'; scenario ids are unique across the spec tree`;
      return false;
    });
    return kept.length === n.scenarios.length ? n : { ...n, scenarios: kept, ...(problem ? { problem } : {}) };
  });
}
