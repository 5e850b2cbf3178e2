import type { SessionChecks } from '../projections/index.js';

/** One line per check: verdict, scenario, the session's and trunk's outcomes; then the gate's line and the overrides. */
export function checksText(c: SessionChecks & { notes: readonly string[] }, skipped: readonly { scenario: string; why: string }[] = []): string {
  const lines = c.checks.flatMap((x) => [
    `${x.verdict.padEnd(14)} ${x.scenario}  here ${x.head ? x.head.outcome : '-'} · trunk ${x.trunk ? x.trunk.outcome : x.trunkLatest ? `- (latest ${x.trunkLatest.outcome} at ${x.trunkLatest.commit?.slice(0, 12) ?? 'no commit'}, not the tip)` : '-'}  (${x.because.join(', ')}${x.required ? ', required' : ''}${x.node ? ` · ${x.node}` : ''})`,
    ...(x.changed
      ? [
          `               fixed at dispatch: ${x.changed.fixed.run} → ${x.head ? x.head.outcome : 'not run'}`,
          `               the branch's:      ${x.changed.now.run ?? '(removed)'}${x.changed.now.run ? ` → ${x.changed.headNow ? x.changed.headNow.outcome : 'not run'}` : ''}${x.changed.accepted ? `  (accepted by ${x.changed.accepted.by}: ${x.changed.accepted.reason})` : ''}`,
        ]
      : []),
  ]);
  return [
    ...lines,
    ...skipped.map((s) => `not run: ${s.scenario}: ${s.why}`),
    ...c.notes.map((n) => `note: ${n}`),
    ...c.overrides.map((o) => `overridden by ${o.by} at ${o.at} for ${o.scenarios.join(', ')}: ${o.reason}`),
    ...c.acceptances.map((a) => `changed check accepted by ${a.by} at ${a.at} for ${a.scenarios.map((d) => d.id).join(', ')}: ${a.reason}`),
    c.line,
    '',
  ].join('\n');
}
