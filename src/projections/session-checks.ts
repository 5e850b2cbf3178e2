import type { CheckDefinition, Reading } from '../events/index.js';
import type { EvalState } from './eval-readings.js';
import type { ScenarioDecl } from './scenarios.js';
import type { CheckAcceptance, MergeOverride } from './session.js';

/*
 * A session's checks (DESIGN.md §14): the scenarios that concern it, each run as defined at dispatch
 * (never as the branch under judgement redefines it), the session's reading at its head commit against
 * trunk's reading at trunk's tip, a verdict, and whether the merge gate lets it through. Pure, so the
 * review bundle, the merge gate and the page read one answer.
 */

/**
 * `pass` (passes here and on trunk), `fixed` (fails on trunk, passes here), `regressed` (passes on trunk,
 * fails here), `still failing` (fails in both), `new` (added by the branch, or not declared on trunk),
 * `unmeasured` (no reading at the session's head commit, or none of trunk at its tip), `changed` (the
 * branch changed or removed the definition fixed at dispatch).
 */
export type Verdict = 'pass' | 'fixed' | 'regressed' | 'still failing' | 'new' | 'unmeasured' | 'changed';

/** Why a scenario is one of the session's checks: a node it is linked to, a node its branch changes, its issue's `checks`. */
export type CheckCause = 'linked' | 'changed' | 'issue';

/** Trunk's reading for the comparison: at trunk's tip, only older (`stale`), none (`missing`), or trunk does not declare it (`none`). */
export type Baseline = 'tip' | 'stale' | 'missing' | 'none';

/** A check whose definition the branch changed: the one fixed at dispatch, the head's, and the head's reading of the new one. */
export interface ChangedDefinition {
  readonly fixed: CheckDefinition;
  readonly now: CheckDefinition;
  /** The head's reading of the new definition (null when it was removed or not run yet). */
  readonly headNow: Reading | null;
  /** The person's acceptance of the new definition, if any. */
  readonly accepted: CheckAcceptance | null;
}

export interface SessionCheck {
  readonly scenario: string;
  /** The definition the gate runs (fixed at dispatch, or a new one a person accepted); null when declared nowhere. */
  readonly node: string | null;
  readonly run: string | null;
  readonly timeoutS: number | null;
  readonly because: readonly CheckCause[];
  /** Named by the session's issue (as at spawn): it must pass at the head. */
  readonly required: boolean;
  /** The session's latest reading of that definition at its head commit. */
  readonly head: Reading | null;
  /** Trunk's latest run of its own definition at trunk's tip (the baseline). */
  readonly trunk: Reading | null;
  /** Trunk's latest reading at any commit (what a stale baseline was). */
  readonly trunkLatest: Reading | null;
  readonly baseline: Baseline;
  readonly verdict: Verdict;
  readonly changed: ChangedDefinition | null;
  /** Why it blocks the merge, in words; null when it does not. */
  readonly blocks: string | null;
}

export type MergeGateSetting = 'checks' | 'off';

export interface SessionChecks {
  /** The project's `sessions.mergeGate`. */
  readonly gate: MergeGateSetting;
  /** The commit the verdicts are for. */
  readonly head: string;
  /** Trunk's tip: the baseline's commit. */
  readonly trunkTip: string | null;
  /** The base commit the definitions were fixed at (null: a session from before the rule; trunk's declarations stand in). */
  readonly fixedAt: string | null;
  readonly checks: readonly SessionCheck[];
  /** Scenarios that block the merge (none when the gate is off). */
  readonly blocking: readonly string[];
  /** Whether the gate lets the merge through without an override. */
  readonly ready: boolean;
  /** The command that measures the checks at the head commit (and trunk at its tip). */
  readonly measure: string;
  /** The pre-flight's line: ready, or what blocks it and how to go on. */
  readonly line: string;
  /** Overrides of the gate so far, oldest first. */
  readonly overrides: readonly MergeOverride[];
  /** Acceptances of changed definitions so far, oldest first. */
  readonly acceptances: readonly CheckAcceptance[];
}

/** The verdict of one scenario from the session's reading at its head and trunk's at its tip. */
export function verdictOf(head: Reading | null, trunk: Reading | null): Verdict {
  if (!head) return 'unmeasured';
  if (!trunk) return 'new';
  const here = head.outcome === 'pass';
  const there = trunk.outcome === 'pass';
  return here ? (there ? 'pass' : 'fixed') : there ? 'regressed' : 'still failing';
}

export interface ChecksInput {
  readonly session: string;
  readonly head: string;
  /** Nodes the session is linked to. */
  readonly linked: readonly string[];
  /** Nodes its branch changes. */
  readonly changed: readonly string[];
  /** Scenarios its issue names as its acceptance (as at spawn). */
  readonly issue: readonly string[];
  /** The base commit's declarations, fixed at dispatch; null for a session from before the rule. */
  readonly fixed?: { readonly base: string; readonly scenarios: readonly CheckDefinition[] } | null;
  /** Scenarios declared in the session's own tree at its head (null: its worktree is gone, nothing to compare), and in trunk's. */
  readonly own: readonly ScenarioDecl[] | null;
  readonly trunk: readonly ScenarioDecl[];
  /** Trunk's tip commit (the merge target). */
  readonly trunkTip?: string | null;
  /** The readings streams (only the selected scenarios' are read). */
  readonly streams: Iterable<EvalState>;
  readonly gate: MergeGateSetting;
  readonly overrides: readonly MergeOverride[];
  readonly acceptances?: readonly CheckAcceptance[];
}

const definitionOf = (d: ScenarioDecl): CheckDefinition => ({ id: d.id, node: d.node, run: d.run, timeoutS: d.timeoutS });
const sameDefinition = (a: CheckDefinition, b: CheckDefinition | null): boolean => b !== null && a.run === b.run && a.timeoutS === b.timeoutS;
const short = (c: string | null | undefined) => (c ? c.slice(0, 12) : 'no commit');

/** The session's checks, sorted by scenario id, with their verdicts and the gate's answer. */
export function sessionChecks(i: ChecksInput): SessionChecks {
  const fixed = new Map((i.fixed?.scenarios ?? i.trunk.map(definitionOf)).map((d) => [d.id, d]));
  const own = i.own === null ? null : new Map(i.own.map((d) => [d.id, definitionOf(d)]));
  const trunk = new Map(i.trunk.map((d) => [d.id, definitionOf(d)]));
  const trunkTip = i.trunkTip ?? null;
  const acceptances = i.acceptances ?? [];
  const linked = new Set(i.linked);
  const changedNodes = new Set(i.changed);
  const causes = new Map<string, Set<CheckCause>>();
  const add = (scenario: string, cause: CheckCause) => {
    const have = causes.get(scenario);
    if (have) have.add(cause);
    else causes.set(scenario, new Set([cause]));
  };
  for (const d of [...fixed.values(), ...(own?.values() ?? [])]) {
    if (d.node !== null && linked.has(d.node)) add(d.id, 'linked');
    if (d.node !== null && changedNodes.has(d.node)) add(d.id, 'changed');
  }
  const required = new Set(i.issue);
  for (const s of i.issue) add(s, 'issue');
  const readings = readingsOf(i.streams, new Set(causes.keys()));
  const checks: SessionCheck[] = [...causes.keys()].sort().map((scenario) => {
    const atDispatch = fixed.get(scenario) ?? null;
    const now = own === null ? atDispatch : (own.get(scenario) ?? null);
    const onTrunk = trunk.get(scenario) ?? null;
    // Trunk itself moved to the head's definition since dispatch (the branch brought trunk in): not the branch's doing.
    const adopted = atDispatch !== null && now !== null && !sameDefinition(atDispatch, now) && sameDefinition(now, onTrunk);
    const redefined = atDispatch !== null && !sameDefinition(atDispatch, now) && !adopted;
    const nowDef: CheckDefinition = now ?? { id: scenario, node: atDispatch?.node ?? null, run: null, timeoutS: null };
    const accepted = redefined ? ([...acceptances].reverse().find((a) => a.scenarios.some((d) => d.id === scenario && d.run === nowDef.run && d.timeoutS === nowDef.timeoutS)) ?? null) : null;
    // The definition the gate runs: the one fixed at dispatch, unless a person accepted the branch's (or trunk adopted it).
    const effective = atDispatch === null ? (now ?? onTrunk) : redefined ? (accepted ? now : atDispatch) : adopted ? now : atDispatch;
    const rs = readings.get(scenario) ?? [];
    const head = effective?.run ? latest(rs, (r) => r.scope === i.session && r.commit === i.head && r.run === effective.run) : null;
    const headNow = redefined && now?.run ? latest(rs, (r) => r.scope === i.session && r.commit === i.head && r.run === now.run) : null;
    const trunkLatest = latest(rs, (r) => r.scope === 'trunk');
    // The baseline is a run of trunk's own definition at its tip: a reading filed from outside (`eval record`,
    // which anyone, the session judged included, can file) is shown but never compared with.
    const trunkAtTip = trunkTip && onTrunk ? latest(rs, (r) => r.scope === 'trunk' && r.commit === trunkTip && r.run === onTrunk.run) : null;
    const baseline: Baseline = onTrunk === null ? 'none' : trunkAtTip ? 'tip' : trunkLatest ? 'stale' : 'missing';
    let verdict: Verdict;
    if (redefined && (!accepted || now === null)) verdict = 'changed';
    else if (atDispatch === null && now !== null) verdict = 'new';
    else if (!head) verdict = 'unmeasured';
    else if (baseline === 'none') verdict = 'new';
    else if (baseline !== 'tip') verdict = 'unmeasured';
    else verdict = verdictOf(head, trunkAtTip);
    const isRequired = required.has(scenario);
    const check = {
      scenario,
      node: effective?.node ?? null,
      run: effective?.run ?? null,
      timeoutS: effective?.timeoutS ?? null,
      because: (['linked', 'changed', 'issue'] as const).filter((c) => causes.get(scenario)!.has(c)),
      required: isRequired,
      head,
      trunk: trunkAtTip,
      trunkLatest,
      baseline,
      verdict,
      changed: redefined ? { fixed: atDispatch, now: nowDef, headNow, accepted } : null,
    };
    return { ...check, blocks: i.gate === 'off' ? null : whyBlocks(check, i.head, trunkTip) };
  });
  const blocking = checks.filter((c) => c.blocks !== null).map((c) => c.scenario);
  const measure = `trellis session check ${i.session}`;
  return {
    gate: i.gate,
    head: i.head,
    trunkTip,
    fixedAt: i.fixed?.base ?? null,
    checks,
    blocking,
    ready: blocking.length === 0,
    measure,
    line: gateLine(i.session, i.gate, checks, measure),
    overrides: i.overrides,
    acceptances,
  };
}

/** Why a check blocks the merge, in words, or null. */
function whyBlocks(c: Omit<SessionCheck, 'blocks'>, head: string, trunkTip: string | null): string | null {
  if (c.verdict === 'changed') {
    if (c.changed?.accepted) return null;
    return `changed: the branch ${c.changed?.now.run === null ? 'removed' : 'redefined'} the check fixed at dispatch; a person accepts the new definition or overrides`;
  }
  if (c.verdict === 'regressed') return `regressed: passes on trunk, ${c.head!.outcome} at ${short(head)}`;
  if (c.verdict === 'unmeasured') {
    if (c.run === null) return 'declared by no spec node, here or on trunk';
    if (!c.head) return `not measured at ${short(head)}`;
    if (c.baseline !== 'stale') return `trunk not measured at its tip ${short(trunkTip)}`;
    if (c.trunkLatest?.commit === trunkTip) return `trunk not measured at its tip ${short(trunkTip)} by Trellis (its reading there was filed from outside)`;
    return `trunk not measured at its tip ${short(trunkTip)} (its latest reading is at ${short(c.trunkLatest?.commit)})`;
  }
  if (c.required && c.head?.outcome !== 'pass') return `required by the issue and ${c.head ? `${c.head.outcome} at ${short(head)}` : `not measured at ${short(head)}`}`;
  return null;
}

function readingsOf(streams: Iterable<EvalState>, wanted: ReadonlySet<string>): Map<string, readonly Reading[]> {
  const out = new Map<string, readonly Reading[]>();
  for (const s of streams) if (wanted.has(s.scenario)) out.set(s.scenario, s.readings);
  return out;
}

/** The latest reading that matches (a later `at` wins; a tie keeps the later filed). */
function latest(readings: readonly Reading[], match: (r: Reading) => boolean): Reading | null {
  let have: Reading | null = null;
  for (const r of readings) if (match(r) && (have === null || have.at <= r.at)) have = r;
  return have;
}

/**
 * The verdicts counted (`1 fixed, 1 pass`), each failing one that does not block said with why, so "ready"
 * never stands beside "failing" unexplained: a `still failing` check fails on trunk too and the issue does
 * not require it; a `new` one failing here is not on trunk to compare with.
 */
export function verdictTally(checks: readonly Pick<SessionCheck, 'verdict' | 'blocks' | 'head'>[]): string {
  const counts = new Map<Verdict, number>();
  for (const c of checks) counts.set(c.verdict, (counts.get(c.verdict) ?? 0) + 1);
  return [...counts]
    .map(([v, n]) => {
      const mine = checks.filter((c) => c.verdict === v);
      if (v === 'still failing' && mine.every((c) => c.blocks === null)) return `${n} still failing (${n === 1 ? 'it fails' : 'they fail'} on trunk too and the issue does not require ${n === 1 ? 'it' : 'them'}, so not blocking)`;
      const failing = v === 'new' ? mine.filter((c) => c.head && c.head.outcome !== 'pass').length : 0;
      if (failing) return `${n} new (${failing} failing here; not on trunk to compare with and not required, so not blocking)`;
      return `${n} ${v}`;
    })
    .join(', ');
}

function gateLine(session: string, gate: MergeGateSetting, checks: readonly SessionCheck[], measure: string): string {
  const tally = verdictTally(checks);
  if (gate === 'off') return `checks: not gating (sessions.mergeGate is "off")${tally ? `; ${tally}` : ''}`;
  const blocking = checks.filter((c) => c.blocks !== null);
  if (blocking.length === 0) return checks.length ? `checks: ready to merge (${tally})` : 'checks: ready to merge (no scenario concerns this session)';
  const group = (label: string, pick: (c: SessionCheck) => boolean) => {
    const ids = blocking.filter(pick).map((c) => c.scenario);
    return ids.length ? `${label}: ${ids.join(', ')}` : '';
  };
  const what = [
    group('regressed', (c) => c.verdict === 'regressed'),
    group('changed since dispatch', (c) => c.verdict === 'changed'),
    group('not measured at the head commit', (c) => c.verdict === 'unmeasured' && !c.head),
    group("trunk not measured at its tip", (c) => c.verdict === 'unmeasured' && c.head !== null),
    group('required by the issue, not passing', (c) => c.verdict !== 'regressed' && c.verdict !== 'unmeasured' && c.verdict !== 'changed'),
  ].filter(Boolean);
  const accept = blocking.some((c) => c.verdict === 'changed') ? `, accept a changed check: trellis session accept ${session} --reason <why>` : '';
  return `checks: blocked (${what.join('; ')}); measure with '${measure}'${accept}, or override: trellis session merge ${session} --override <reason>`;
}
