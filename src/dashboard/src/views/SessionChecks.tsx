import { signal } from '@preact/signals';
import { href } from '../router';
import type { OverlapWith, ReviewBundle } from '../types';

/*
 * A session's checks and its overlaps with other live sessions (DESIGN.md §14), as the session page, the
 * session list and the spawn form show them.
 */

/** What the last spawn from this page was warned about, shown on the new session's page. */
export const spawnWarnings = signal<{ id: string; warnings: readonly string[] } | null>(null);

/** The live sessions this one overlaps: which session, which nodes and paths. */
export function OverlapFlags({ overlaps, compact }: { overlaps: readonly OverlapWith[] | undefined; compact?: boolean }) {
  if (!overlaps?.length) return null;
  if (compact) {
    return (
      <span class="chip unresolved overlap" data-testid="overlap" title={overlaps.map((o) => `${o.session}: ${[...o.nodes, ...o.paths].join(', ')}`).join('\n')}>
        ⚠ overlaps {overlaps.map((o) => o.session).join(', ')}
      </span>
    );
  }
  return (
    <div class="notice overlaps" role="status" data-testid="overlaps">
      <b>Another live session changes the same things.</b>
      <ul class="list compact">
        {overlaps.map((o) => (
          <li key={o.session} data-overlap={o.session}>
            <a href={href.session(o.session)}>{o.session}</a>
            {o.nodes.map((n) => (
              <a key={n} class="chip node" href={href.node(n)}>
                {n}
              </a>
            ))}
            {o.paths.map((p) => (
              <code key={p}> {p}</code>
            ))}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** Warnings the spawn of this session came back with (another live session already changing its nodes). */
export function SpawnWarnings({ id }: { id: string }) {
  const w = spawnWarnings.value;
  if (!w || w.id !== id || !w.warnings.length) return null;
  return (
    <div class="notice" role="status" data-testid="spawn-warnings">
      {w.warnings.map((x) => (
        <p key={x}>⚠ {x}</p>
      ))}
    </div>
  );
}

/** The review bundle's checks: each scenario's verdict, here and on trunk; the gate's line; its overrides. */
export function ChecksPanel({ checks }: { checks: ReviewBundle['checks'] }) {
  return (
    <div class="checks" data-testid="checks">
      <p class={`chip ${checks.ready ? 'resolved' : 'problem'}`} data-testid="checks-line">
        {checks.line}
      </p>
      {checks.checks.length ? (
        <table class="checks-table">
          <thead>
            <tr>
              <th scope="col">Scenario</th>
              <th scope="col">Verdict</th>
              <th scope="col">Here</th>
              <th scope="col">Trunk</th>
            </tr>
          </thead>
          <tbody>
            {checks.checks.map((c) => (
              <tr key={c.scenario} data-check={c.scenario}>
                <th scope="row">
                  <a href={href.eval()}>{c.scenario}</a> <span class="muted small">{c.because.join(', ')}</span>
                </th>
                <td data-verdict={c.verdict}>{c.verdict}</td>
                <td>{c.head ? c.head.outcome : 'not measured at this commit'}</td>
                <td>{c.trunk ? c.trunk.outcome : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {checks.overrides.map((o) => (
        <p key={o.at} class="muted" data-testid="override">
          Gate overridden by <b>{o.by}</b> for {o.scenarios.join(', ')}: {o.reason}
        </p>
      ))}
    </div>
  );
}
