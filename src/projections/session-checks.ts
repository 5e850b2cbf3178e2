import type { Reading } from '../events/index.js';
import type { EvalState } from './eval-readings.js';
import type { ScenarioDecl } from './scenarios.js';
import type { MergeOverride } from './session.js';

/*
 * A session's checks (DESIGN.md §14): the scenarios that concern it, each with the session's reading at
 * its head commit, trunk's latest reading, and a verdict; and whether the merge gate lets it through.
 * Pure, so the review bundle, the merge gate and the page read one answer.
 */

/**
 * `pass` (passes here and on trunk), `fixed` (fails on trunk, passes here), `regressed` (passes on trunk,
 * fails here), `still failing` (fails in both), `new` (measured here, never on trunk), `unmeasured` (no
 * reading at the session's head commit).
 */
export type Verdict = 'pass' | 'fixed' | 'regressed' | 'still failing' | 'new' | 'unmeasured';

/** Why a scenario is one of the session's checks: a node it is linked to, a node its branch changes, its issue's `checks`. */
export type CheckCause = 'linked' | 'changed' | 'issue';

export interface SessionCheck {
  readonly scenario: string;
  /** The declaring node, its command (the session's own tree first, then trunk's); null when declared in neither. */
  readonly node: string | null;
  readonly run: string | null;
  readonly because: readonly CheckCause[];
  /** The session's latest reading at its head commit. */
  readonly head: Reading | null;
  /** Trunk's latest reading, at whatever commit. */
  readonly trunk: Reading | null;
  readonly verdict: Verdict;
}

export type MergeGateSetting = 'checks' | 'off';

export interface SessionChecks {
  /** The project's `sessions.mergeGate`. */
  readonly gate: MergeGateSetting;
  /** The commit the verdicts are for. */
  readonly head: string;
  readonly checks: readonly SessionCheck[];
  /** Scenarios that block the merge: regressed, or not measured at the head commit (none when the gate is off). */
  readonly blocking: readonly string[];
  /** Whether the gate lets the merge through without an override. */
  readonly ready: boolean;
  /** The command that measures the checks at the head commit. */
  readonly measure: string;
  /** The pre-flight's line: ready, or what blocks it and how to go on. */
  readonly line: string;
  /** Overrides of the gate so far, oldest first. */
  readonly overrides: readonly MergeOverride[];
}

/** The verdict of one scenario from the session's reading at its head and trunk's latest. */
export function verdictOf(head: Reading | null, trunk: Reading | null): Verdict {
  if (!head) return 'unmeasured';
  if (!trunk) return 'new';
  const here = head.outcome === 'pass';
  const there = trunk.outcome === 'pass';
  return here ? (there ? 'pass' : 'fixed') : there ? 'regressed' : 'still failing';
}

const BLOCKS: ReadonlySet<Verdict> = new Set(['regressed', 'unmeasured']);

export interface ChecksInput {
  readonly session: string;
  readonly head: string;
  /** Nodes the session is linked to. */
  readonly linked: readonly string[];
  /** Nodes its branch changes. */
  readonly changed: readonly string[];
  /** Scenarios its issue names as its acceptance. */
  readonly issue: readonly string[];
  /** Scenarios declared in the session's own tree, and in trunk's. */
  readonly own: readonly ScenarioDecl[];
  readonly trunk: readonly ScenarioDecl[];
  /** The readings streams (only the selected scenarios' are read). */
  readonly streams: Iterable<EvalState>;
  readonly gate: MergeGateSetting;
  readonly overrides: readonly MergeOverride[];
}

/** The session's checks, sorted by scenario id, with their verdicts and the gate's answer. */
export function sessionChecks(i: ChecksInput): SessionChecks {
  const linked = new Set(i.linked);
  const changed = new Set(i.changed);
  const causes = new Map<string, Set<CheckCause>>();
  const decls = new Map<string, ScenarioDecl>();
  const add = (scenario: string, cause: CheckCause) => {
    const have = causes.get(scenario);
    if (have) have.add(cause);
    else causes.set(scenario, new Set([cause]));
  };
  // The session's own declaration wins: it is what runs in its worktree.
  for (const d of [...i.trunk, ...i.own]) {
    const byLink = linked.has(d.node);
    const byChange = changed.has(d.node);
    if (!byLink && !byChange) continue;
    decls.set(d.id, d);
    if (byLink) add(d.id, 'linked');
    if (byChange) add(d.id, 'changed');
  }
  for (const s of i.issue) {
    add(s, 'issue');
    if (!decls.has(s)) {
      const d = i.own.find((x) => x.id === s) ?? i.trunk.find((x) => x.id === s);
      if (d) decls.set(s, d);
    }
  }
  const latest = latestReadings(i.streams, new Set(causes.keys()), i.session, i.head);
  const checks: SessionCheck[] = [...causes.keys()].sort().map((scenario) => {
    const d = decls.get(scenario);
    const r = latest.get(scenario);
    const head = r?.head ?? null;
    const trunk = r?.trunk ?? null;
    const order: CheckCause[] = ['linked', 'changed', 'issue'];
    return { scenario, node: d?.node ?? null, run: d?.run ?? null, because: order.filter((c) => causes.get(scenario)!.has(c)), head, trunk, verdict: verdictOf(head, trunk) };
  });
  const blocking = i.gate === 'off' ? [] : checks.filter((c) => BLOCKS.has(c.verdict)).map((c) => c.scenario);
  const measure = `trellis session check ${i.session}`;
  return { gate: i.gate, head: i.head, checks, blocking, ready: blocking.length === 0, measure, line: gateLine(i.session, i.gate, checks, blocking, measure), overrides: i.overrides };
}

function latestReadings(streams: Iterable<EvalState>, wanted: ReadonlySet<string>, session: string, head: string): Map<string, { head: Reading | null; trunk: Reading | null }> {
  const out = new Map<string, { head: Reading | null; trunk: Reading | null }>();
  const later = (have: Reading | null, r: Reading) => (have === null || have.at <= r.at ? r : have);
  for (const s of streams) {
    if (!wanted.has(s.scenario)) continue;
    let here: Reading | null = null;
    let trunk: Reading | null = null;
    for (const r of s.readings) {
      if (r.scope === session && r.commit === head) here = later(here, r);
      else if (r.scope === 'trunk') trunk = later(trunk, r);
    }
    out.set(s.scenario, { head: here, trunk });
  }
  return out;
}

function gateLine(session: string, gate: MergeGateSetting, checks: readonly SessionCheck[], blocking: readonly string[], measure: string): string {
  const counts = new Map<Verdict, number>();
  for (const c of checks) counts.set(c.verdict, (counts.get(c.verdict) ?? 0) + 1);
  const tally = [...counts].map(([v, n]) => `${n} ${v}`).join(', ');
  if (gate === 'off') return `checks: not gating (sessions.mergeGate is "off")${tally ? `; ${tally}` : ''}`;
  if (blocking.length === 0) return checks.length ? `checks: ready to merge (${tally})` : 'checks: ready to merge (no scenario concerns this session)';
  const by = (v: Verdict) => checks.filter((c) => c.verdict === v && blocking.includes(c.scenario)).map((c) => c.scenario);
  const regressed = by('regressed');
  const unmeasured = by('unmeasured');
  const what = [regressed.length ? `regressed: ${regressed.join(', ')}` : '', unmeasured.length ? `not measured at the head commit: ${unmeasured.join(', ')}` : ''].filter(Boolean).join('; ');
  return `checks: blocked (${what}); measure with '${measure}', or override: trellis session merge ${session} --override <reason>`;
}
