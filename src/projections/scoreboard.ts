import type { Outcome, Reading } from '../events/index.js';
import { readingsByScope, type EvalState, type ScopeReadings } from './eval-readings.js';
import type { ScenarioDecl } from './scenarios.js';
import type { ThreadState } from './thread.js';

/**
 * Scoreboard format versions (`version`):
 *   1 — initial: scopes, and per declared scenario its cells (scope → latest reading, last outcomes,
 *       open eval remarks).
 */
export const SCOREBOARD_VERSION = 1;

/** A scope a scenario can be measured in: `trunk` (the main checkout) or a live linked worktree. */
export interface ScopeInfo {
  /** `trunk`, a session id (branch `trellis/<id>`), or the worktree's branch name. */
  readonly name: string;
  readonly worktree: string;
  readonly branch: string | null;
  readonly head: string | null;
}

/** A live scope and the scenarios its worktree's spec tree declares. Trunk comes first. */
export interface ScopeDeclarations {
  readonly scope: ScopeInfo;
  readonly scenarios: readonly ScenarioDecl[];
}

/** An open eval-remark thread, as the scoreboard and the detail list it. */
export interface RemarkRef {
  readonly thread: string;
  readonly concern: string;
  readonly by: string;
  readonly created: string;
  /** The reading it was filed against, when it names one. */
  readonly reading: string | null;
  readonly replies: number;
}

export interface ScoreCell {
  readonly scope: string;
  /** Whether the scope still exists (a removed worktree's readings stay, marked not live). */
  readonly live: boolean;
  /** Whether the scope's spec tree declares the scenario. */
  readonly declared: boolean;
  readonly latest: Reading | null;
  /** The last outcomes, newest first, at most 10. */
  readonly last: readonly Outcome[];
  readonly readings: number;
  /** Open eval remarks against this scope's readings. */
  readonly remarks: readonly RemarkRef[];
  /** The latest reading is older than the scope's tip (measured at another commit than the live scope's head): the commit it is at is `latest.commit`. */
  readonly stale: boolean;
}

export interface ScenarioRow {
  readonly id: string;
  /** The declaring node, its command and timeout; null for a scenario declared in no live scope that still has readings. */
  readonly node: string | null;
  readonly run: string | null;
  readonly timeoutS: number | null;
  /** Live scopes whose spec tree declares it, trunk first. */
  readonly declaredIn: readonly string[];
  readonly cells: readonly ScoreCell[];
  /** Open eval remarks on the scenario that name no reading of it. */
  readonly remarks: readonly RemarkRef[];
}

export interface Scoreboard {
  readonly version: typeof SCOREBOARD_VERSION;
  readonly scopes: readonly ScopeInfo[];
  readonly scenarios: readonly ScenarioRow[];
}

/** Every declared scenario, its declaration (trunk's when trunk declares it) and the live scopes declaring it. */
export function declaredScenarios(scopes: readonly ScopeDeclarations[]): Map<string, { decl: ScenarioDecl; declaredIn: string[] }> {
  const out = new Map<string, { decl: ScenarioDecl; declaredIn: string[] }>();
  for (const { scope, scenarios } of scopes) {
    for (const s of scenarios) {
      const have = out.get(s.id);
      if (have) have.declaredIn.push(scope.name);
      else out.set(s.id, { decl: s, declaredIn: [scope.name] });
    }
  }
  return out;
}

/** Open eval-remark threads by scenario. */
export function remarksByScenario(threads: Iterable<ThreadState>): Map<string, ThreadState[]> {
  const out = new Map<string, ThreadState[]>();
  for (const t of threads) {
    if (t.status !== 'open' || !t.scope) continue;
    const list = out.get(t.scope.scenario);
    if (list) list.push(t);
    else out.set(t.scope.scenario, [t]);
  }
  return out;
}

export const remarkRef = (t: ThreadState): RemarkRef => ({
  thread: t.id,
  concern: t.concern,
  by: t.by,
  created: t.created,
  reading: t.scope?.reading ?? null,
  replies: t.replies.length,
});

export interface ScoreboardInputs {
  /** Live scopes with their declarations, trunk first. */
  readonly scopes: readonly ScopeDeclarations[];
  /** Every scenario's readings stream. */
  readonly streams: Iterable<EvalState>;
  /** Eval-remark threads (any status; only open ones are shown). */
  readonly remarks: Iterable<ThreadState>;
}

/**
 * The scoreboard (DESIGN.md §12): every declared scenario × scope → its latest reading, the last 10
 * outcomes and the open eval-remark threads against it. A scenario has a cell for every live scope that
 * declares it and every scope (live or gone) that has readings of it; a scenario declared nowhere live
 * whose ref still holds readings (its worktree was removed) keeps its row, with no declaration.
 * Deterministic: scenarios by id,
 * cells trunk first, then live scopes in worktree order, then gone scopes by name.
 */
export function buildScoreboard(inputs: ScoreboardInputs): Scoreboard {
  const declared = declaredScenarios(inputs.scopes);
  const streams = new Map<string, EvalState>();
  for (const s of inputs.streams) streams.set(s.scenario, s);
  const remarks = remarksByScenario(inputs.remarks);
  const order = new Map(inputs.scopes.map((s, i) => [s.scope.name, i]));
  const declaredBy = new Map(inputs.scopes.map((s) => [s.scope.name, new Set(s.scenarios.map((d) => d.id))]));
  const heads = new Map(inputs.scopes.map((s) => [s.scope.name, s.scope.head]));
  const rows: ScenarioRow[] = [];
  const ids = new Set([...declared.keys(), ...[...streams.values()].filter((s) => s.readings.length > 0).map((s) => s.scenario)]);
  for (const id of [...ids].sort()) {
    const { decl, declaredIn } = declared.get(id) ?? { decl: null, declaredIn: [] };
    const byScope = streams.has(id) ? readingsByScope(streams.get(id)!) : new Map<string, ScopeReadings>();
    const names = new Set([...declaredIn, ...byScope.keys()]);
    const sorted = [...names].sort((a, b) => {
      const oa = order.get(a) ?? Infinity;
      const ob = order.get(b) ?? Infinity;
      return oa !== ob ? oa - ob : a < b ? -1 : a > b ? 1 : 0;
    });
    const { cellRemarks, loose } = splitRemarks(remarks.get(id) ?? [], byScope);
    rows.push({
      id,
      node: decl?.node ?? null,
      run: decl?.run ?? null,
      timeoutS: decl?.timeoutS ?? null,
      declaredIn,
      cells: sorted.map((scope) => {
        const r = byScope.get(scope);
        return {
          scope,
          live: order.has(scope),
          declared: declaredBy.get(scope)?.has(id) ?? false,
          latest: r?.latest ?? null,
          last: r?.last ?? [],
          readings: r?.count ?? 0,
          remarks: cellRemarks.get(scope) ?? [],
          stale: isStale(r?.latest ?? null, heads.get(scope)),
        };
      }),
      remarks: loose,
    });
  }
  return { version: SCOREBOARD_VERSION, scopes: inputs.scopes.map((s) => s.scope), scenarios: rows };
}

/**
 * A stale reading said plainly (issue 39: after a merge into trunk, trunk's readings predate it): which
 * tip it predates and the commit it was measured at; null when the reading is at the scope's head.
 */
export function predatesWords(cell: Pick<ScoreCell, 'scope' | 'stale' | 'latest'>, head: string | null | undefined): string | null {
  if (!cell.stale || !cell.latest || !head) return null;
  const at = cell.latest.commit ? cell.latest.commit.slice(0, 8) : 'no commit';
  return `predates ${cell.scope === 'trunk' ? "trunk's tip" : `${cell.scope}'s head`} ${head.slice(0, 8)}: measured at ${at}, before ${cell.scope === 'trunk' ? 'trunk moved (a merge or a commit)' : 'its latest commit'}; run it again to measure the tip`;
}

/** A reading at another commit than its live scope's head (a gone scope has no head to be behind). */
const isStale = (latest: Reading | null, head: string | null | undefined): boolean => latest !== null && typeof head === 'string' && latest.commit !== head;

/** Puts each remark in the cell of the scope its reading was measured in; the rest stay on the row. */
function splitRemarks(threads: readonly ThreadState[], byScope: ReadonlyMap<string, ScopeReadings>): { cellRemarks: Map<string, RemarkRef[]>; loose: RemarkRef[] } {
  const cellRemarks = new Map<string, RemarkRef[]>();
  const loose: RemarkRef[] = [];
  if (threads.length === 0) return { cellRemarks, loose };
  const scopeOf = new Map<string, string>();
  for (const [scope, r] of byScope) for (const reading of r.readings) scopeOf.set(reading.id, scope);
  for (const t of [...threads].sort((a, b) => (a.created < b.created ? -1 : a.created > b.created ? 1 : a.id < b.id ? -1 : 1))) {
    const ref = remarkRef(t);
    const scope = ref.reading === null ? undefined : scopeOf.get(ref.reading);
    if (scope === undefined) loose.push(ref);
    else cellRemarks.set(scope, [...(cellRemarks.get(scope) ?? []), ref]);
  }
  return { cellRemarks, loose };
}

/** The latest trunk outcome of each scenario, for the board's slim per-node fold. */
export interface ScenarioOutcome {
  readonly id: string;
  readonly outcome: Outcome | null;
  /** The reading it comes from: a new reading always changes the board's bytes. */
  readonly reading: string | null;
}

/** Per node id: its declared scenarios with their latest trunk outcomes. */
export function trunkOutcomes(trunk: readonly ScenarioDecl[], streams: Iterable<EvalState>): Map<string, ScenarioOutcome[]> {
  const latest = new Map<string, Reading>();
  for (const s of streams) {
    for (const r of s.readings) {
      if (r.scope !== 'trunk') continue;
      const have = latest.get(s.scenario);
      if (!have || have.at <= r.at) latest.set(s.scenario, r);
    }
  }
  const out = new Map<string, ScenarioOutcome[]>();
  for (const d of trunk) {
    const r = latest.get(d.id);
    const entry = { id: d.id, outcome: r?.outcome ?? null, reading: r?.id ?? null };
    out.set(d.node, [...(out.get(d.node) ?? []), entry]);
  }
  return out;
}
