import { isScenarioId, scenarioKey, TrellisError, type Outcome, type Reading } from '../../events/index.js';
import {
  buildScoreboard,
  declaredScenarios,
  evalRemarkThreads,
  readingsByScope,
  LAST_OUTCOMES,
  remarkRef,
  remarksByScenario,
  type RemarkRef,
  type ScenarioDecl,
  type Scoreboard,
  type ScopeDeclarations,
  type ScopeInfo,
  type ScopeReadings,
} from '../../projections/index.js';
import type { DetailState, EvalDetail } from '../../projections/eval-detail.js';

export type { DetailState, EvalDetail } from '../../projections/eval-detail.js';
import { isEvidenceHash } from '../evidence/evidence.js';
import { newThreadId } from '../project/ids.js';
import type { ThreadsRead } from '../issues/thread-store.js';
import type { EvalProject } from './eval-project.js';
import type { SpecTree } from '../spec/spec-tree.js';
import type { StreamProblem } from '../streams/projection-cache.js';
import type { EvalsRead } from './eval-store.js';
import { runScenario } from './run-scenario.js';
import { liveScopes, requireScope, resolveScope, scopeDeclarations, TRUNK } from './scopes.js';

/*
 * One function per eval verb, shared by `trellis eval ...` and the /api/eval routes (DESIGN.md §12).
 */

/** Where the eval verbs read from; the server hands in its watched, incremental sources. */
export interface EvalSources {
  /** Trunk's spec tree (the server's memoized one); otherwise read from the main checkout. */
  readonly trunkTree?: () => SpecTree;
  readonly readEvals?: () => Promise<EvalsRead>;
  readonly readThreads?: () => Promise<ThreadsRead>;
}

interface Inputs {
  readonly scopes: ScopeInfo[];
  readonly declarations: ScopeDeclarations[];
  readonly evals: EvalsRead;
  readonly threads: ThreadsRead;
}

async function inputs(p: EvalProject, sources: EvalSources): Promise<Inputs> {
  const scopes = await liveScopes(p);
  // Trunk's memoized tree is the main checkout's only when this process runs there.
  const trunkTree = sources.trunkTree && scopes[0]!.worktree === p.root ? sources.trunkTree : undefined;
  const declarations = scopeDeclarations(p, scopes, trunkTree);
  const [evals, threads] = await Promise.all([(sources.readEvals ?? (() => p.evals.all()))(), (sources.readThreads ?? (() => p.threads.all()))()]);
  return { scopes, declarations, evals, threads };
}

export interface ScoreboardAnswer extends Scoreboard {
  /** Scenario streams that cannot be read, by name; the others still list. */
  readonly problems: readonly StreamProblem[];
}

// Memoized per read of the readings and the threads and per declarations: a warm server builds nothing twice.
const boards = new WeakMap<object, { threads: object; declarations: string; answer: ScoreboardAnswer }>();

/** The scoreboard: every declared scenario × scope with its latest reading, last outcomes and open remarks. */
export async function scoreboard(p: EvalProject, sources: EvalSources = {}): Promise<ScoreboardAnswer> {
  const { declarations, evals, threads } = await inputs(p, sources);
  const key = JSON.stringify(declarations);
  const memo = boards.get(evals);
  if (memo && memo.threads === threads && memo.declarations === key) return memo.answer;
  const answer = { ...buildScoreboard({ scopes: declarations, streams: evals.states, remarks: evalRemarkThreads(threads.states) }), problems: evals.problems };
  boards.set(evals, { threads, declarations: key, answer });
  return answer;
}

/** The eval-detail states (spec §3): measured, unmeasured (declared, no reading in the scope), absent-from-trunk. */


/**
 * One scenario in one scope. The scope is resolved first (a vanished one falls back to trunk, saying
 * so); then one of the three states. A scenario declared in no live scope whose ref still holds readings
 * (its worktree was removed) is `absent-from-trunk` with those readings (spec §3, eval-detail rules 4, 5);
 * only a scenario nobody declares and nobody measured is SCENARIO_NOT_FOUND.
 */
export async function evalDetail(p: EvalProject, scenario: string, scope: string | undefined, sources: EvalSources = {}): Promise<EvalDetail> {
  const { scopes, declarations, evals, threads } = await inputs(p, sources);
  const resolved = resolveScope(scopes, scope);
  const name = resolved.scope.name;
  const declared = declaredScenarios(declarations);
  const found = isScenarioId(scenario) ? declared.get(scenario) : undefined;
  const stream = evals.states.find((s) => s.scenario === scenario);
  const byScope = stream ? readingsByScope(stream) : new Map<string, ScopeReadings>();
  if (!found && byScope.size === 0) {
    throw new TrellisError('SCENARIO_NOT_FOUND', `no scenario '${scenario}' is declared on trunk or in a live worktree, and none was ever measured (declare it in a spec node's front matter: scenarios: [{ id, run }])`);
  }
  const here = found?.declaredIn.includes(name) ?? false;
  const onTrunk = found?.declaredIn.includes(TRUNK) ?? false;
  const broken = evals.problems.find((q) => q.id === scenarioKey(scenario));
  // Declared nowhere live: the readings are the requested (vanished) scope's, or all of them.
  const gone = resolved.fallback ? scopeNameOf(resolved.requested) : undefined;
  const inScope = found ? byScope.get(name) : (byScope.get(gone ?? '') ?? undefined);
  const readings = inScope ? [...inScope.readings].reverse() : found ? [] : [...(stream?.readings ?? [])].sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
  const mine = new Set(readings.map((r) => r.id));
  const remarks = (remarksByScenario(evalRemarkThreads(threads.states)).get(scenario) ?? [])
    .map(remarkRef)
    .filter((r) => r.reading === null || mine.has(r.reading) || !stream?.readings.some((x) => x.id === r.reading));
  const state: DetailState = !here && !onTrunk ? 'absent-from-trunk' : readings.length ? 'measured' : 'unmeasured';
  return {
    scenario,
    scope: name,
    ...(resolved.fallback ? { fallback: resolved.fallback, requested: resolved.requested, reason: resolved.reason } : {}),
    state,
    declared: here,
    declaredIn: found?.declaredIn ?? [],
    measuredIn: [...byScope.keys()].sort(),
    declaration: found ? { node: found.decl.node, run: found.decl.run, timeoutS: found.decl.timeoutS } : null,
    reading: readings[0] ?? null,
    last: inScope?.last ?? readings.slice(0, LAST_OUTCOMES).map((r) => r.outcome),
    readings,
    remarks,
    ...(broken ? { problem: `its readings are unreadable (${broken.ref} at ${broken.commit}): ${broken.reason}; inspect with 'git log ${broken.ref}'` } : {}),
  };
}

/** The scope name a requested name stands for: a session's branch `trellis/<id>` is its id. */
const scopeNameOf = (requested: string): string => (requested.startsWith('trellis/') ? requested.slice('trellis/'.length) : requested);

/** A write needs the scopes and declarations only, not the readings or the threads. */
const NO_READS = { readEvals: async () => ({ states: [], problems: [] }), readThreads: async () => ({ states: [], problems: [] }) };

export interface RecordInput {
  readonly outcome: string;
  readonly score?: number;
  readonly scope?: string;
  /** Evidence hash of the measurement's output, already stored. */
  readonly evidence?: string;
  readonly durationMs?: number;
  readonly by: string;
}

/** Files an externally measured reading of a declared scenario in a live scope (default trunk). */
export async function recordReading(p: EvalProject, scenario: string, input: RecordInput, sources: EvalSources = {}): Promise<Reading> {
  const { scopes, declarations } = await inputs(p, { ...sources, ...NO_READS });
  const scope = requireScope(scopes, input.scope);
  requireDeclared(declarations, scenario);
  if (input.evidence !== undefined) {
    if (!isEvidenceHash(input.evidence)) throw new TrellisError('INVALID_INPUT', `'${input.evidence}' is not an evidence hash (64 lowercase hex digits of sha256)`);
    p.evidence.require([input.evidence]);
  }
  return file(p, scenario, {
    scope: scope.name,
    commit: scope.head,
    outcome: input.outcome as Outcome,
    ...(input.score !== undefined ? { score: input.score } : {}),
    durationMs: input.durationMs ?? 0,
    output: input.evidence ?? null,
    by: input.by,
  });
}

export interface RunInput {
  /** Scenario ids; none: every scenario the scope declares. */
  readonly scenarios?: readonly string[];
  readonly scope?: string;
  readonly by: string;
}

/**
 * Runs scenarios in a scope's worktree, one after another, each bounded by its timeout, and files a
 * reading for each with its output as evidence. Every scenario is checked before the first one runs.
 */
export async function runScenarios(p: EvalProject, input: RunInput): Promise<Reading[]> {
  const { scopes, declarations } = await inputs(p, NO_READS);
  const scope = requireScope(scopes, input.scope);
  const here = declarations.find((d) => d.scope.name === scope.name)!.scenarios;
  const wanted = input.scenarios?.length ? input.scenarios : here.map((s) => s.id);
  const decls = wanted.map((id) => {
    const d = here.find((s) => s.id === id);
    if (d) return d;
    requireDeclared(declarations, id);
    throw new TrellisError('SCENARIO_NOT_FOUND', `scenario '${id}' is not declared in scope ${scope.name}'s spec tree (${scope.worktree})`);
  });
  return runDefinitions(p, { scope: scope.name, worktree: scope.worktree, commit: scope.head }, decls, input.by);
}

/** Where definitions run: a scope's name, the folder to run in, and the commit checked out there. */
export interface RunPlace {
  readonly scope: string;
  readonly worktree: string;
  readonly commit: string | null;
  /** An argv prefix that runs each command confined (a session's sandbox): the worktree's code is the agent's. */
  readonly sandbox?: readonly string[];
}

/**
 * Runs the given definitions (not necessarily the ones the folder's spec tree declares: a session's
 * checks run as fixed at dispatch) one after another in `place`, each bounded by its timeout, and files
 * a reading for each naming the command that ran, with its output as evidence.
 */
export async function runDefinitions(p: EvalProject, place: RunPlace, decls: readonly Pick<ScenarioDecl, 'id' | 'run' | 'timeoutS'>[], by: string): Promise<Reading[]> {
  const readings: Reading[] = [];
  for (const d of decls) {
    const run = await runScenario(d.run, { cwd: place.worktree, timeoutS: d.timeoutS, env: { TRELLIS_SCENARIO: d.id, TRELLIS_SCOPE: place.scope }, ...(place.sandbox ? { sandbox: place.sandbox } : {}) });
    const { hash } = await p.evidence.put(run.output);
    readings.push(await file(p, d.id, { scope: place.scope, commit: place.commit, outcome: run.outcome, durationMs: run.durationMs, output: hash, by, run: d.run }));
  }
  return readings;
}

function requireDeclared(declarations: readonly ScopeDeclarations[], scenario: string): ScenarioDecl {
  const found = isScenarioId(scenario) ? declaredScenarios(declarations).get(scenario) : undefined;
  if (!found) throw new TrellisError('SCENARIO_NOT_FOUND', `no scenario '${scenario}' is declared on trunk or in a live worktree`);
  return found.decl;
}

async function file(p: EvalProject, scenario: string, r: Omit<Reading, 'id' | 'scenario' | 'at'>): Promise<Reading> {
  const by = r.by.trim();
  if (!by) throw new TrellisError('INVALID_INPUT', 'author (--by) must be non-empty text');
  const at = p.now().toISOString();
  const { by: _by, ...data } = r;
  const { events } = await p.evals.write(scenarioKey(scenario), { type: 'measure', by, at, reading: { ...data, id: newThreadId(p.random), scenario } });
  const e = events[0]!;
  return { ...e.data, by: e.by, at: e.at };
}
