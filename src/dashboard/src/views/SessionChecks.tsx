import { signal } from '@preact/signals';
import { useState } from 'preact/hooks';
import { enc, post } from '../api';
import { href } from '../router';
import { gateRevision } from '../store';
import { ErrorBox, useAction } from '../ui';
import type { OverlapWith, ReviewBundle } from '../types';
import { mayUse } from '../host/hub';
import { verdictTally } from '../../../projections/session-checks.js';

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

type Check = ReviewBundle['checks']['checks'][number];

/**
 * The merge's verdict in one line, from the review bundle: a conflict blocks the merge whatever the checks
 * say, so it is said first (the checks' tally after it); else the gate's answer. The decision strip and the
 * checks panel say this same line, never two verdicts at once.
 */
export function mergeVerdict(checks: ReviewBundle['checks'], pre: Pick<ReviewBundle['preflight'], 'trunk' | 'conflicts'>): { text: string; good: boolean } {
  if (pre.conflicts.length) {
    const tally = verdictTally(checks.checks);
    return { text: `Not ready to merge: it conflicts with ${pre.trunk} in ${pre.conflicts.join(', ')}${tally ? ` (checks: ${tally})` : ''}.`, good: false };
  }
  return { text: gateSummary(checks), good: checks.ready };
}

/** The gate's answer for people (the CLI's line, with its commands, is the tooltip): from the same checks as the table. */
export function gateSummary(checks: ReviewBundle['checks']): string {
  const tally = verdictTally(checks.checks);
  if (checks.gate === 'off') return `The checks do not gate merges in this project${tally ? ` (${tally})` : ''}.`;
  if (checks.ready) return checks.checks.length ? `Ready to merge: ${tally}.` : 'Ready to merge: no scenario concerns this session, so nothing was checked.';
  const changed = checks.checks.some((c) => c.blocks !== null && c.verdict === 'changed');
  return `Not ready to merge: ${checks.blocking.join(', ')} ${checks.blocking.length === 1 ? 'blocks' : 'block'} it (why, below). Run the checks again${changed ? ', accept a changed definition' : ''}, or a person merges anyway with a reason.`;
}
const short = (c: string | null | undefined) => (c ? c.slice(0, 10) : 'no commit');

/** Trunk's side of a check: its reading at trunk's tip, or how old the latest one is. */
function trunkCell(c: Check, tip: string | null) {
  if (c.trunk) return c.trunk.outcome;
  if (c.baseline === 'none') return 'not declared on trunk';
  if (c.baseline === 'stale') return <span data-testid="stale-baseline">not measured at the tip {short(tip)} (latest: {c.trunkLatest!.outcome} at {short(c.trunkLatest!.commit)})</span>;
  return `not measured at the tip ${short(tip)}`;
}

/**
 * The review bundle's checks: each scenario's verdict as run with the definition fixed at dispatch, here
 * and on trunk's tip; a changed definition beside the one fixed at dispatch, with a person's acceptance;
 * the gate's line; its overrides.
 */
export function ChecksPanel({ checks, session, merged, preflight }: { checks: ReviewBundle['checks']; session: string; merged?: { trunk: string; commit: string } | null; preflight?: Pick<ReviewBundle['preflight'], 'trunk' | 'conflicts'> }) {
  const v = preflight ? mergeVerdict(checks, preflight) : { text: gateSummary(checks), good: checks.ready };
  // Once the branch is in trunk the gate has nothing left to decide: the verdicts stay as the record of the
  // branch, and nothing that only matters before a merge (accepting a definition) is offered.
  const waiting = merged ? [] : checks.checks.filter((c) => c.verdict === 'changed' && !c.changed?.accepted);
  return (
    <div class="checks" data-testid="checks" data-head={checks.head}>
      {merged ? (
        <p class="chip resolved" data-testid="checks-line">
          Merged into {merged.trunk} at {merged.commit.slice(0, 10)}.
        </p>
      ) : (
        <p class={`chip ${v.good ? 'resolved' : 'problem'}`} data-testid="checks-line" title={checks.line}>
          {v.text}
        </p>
      )}
      {merged && checks.checks.length ? (
        <MergedReadings checks={checks} />
      ) : checks.checks.length ? (
        <table class="checks-table">
          <colgroup>
            <col class="col-scenario" />
            <col class="col-verdict" />
            <col class="col-here" />
            <col class="col-trunk" />
          </colgroup>
          <thead>
            <tr>
              <th scope="col">Scenario</th>
              <th scope="col">Verdict</th>
              <th scope="col">Here</th>
              <th scope="col">Trunk</th>
            </tr>
          </thead>
          {/* One tbody per scenario: its row of verdicts, then what it means (a changed definition, why it
              blocks) across the whole width, so the columns keep their place however long the text. */}
          {checks.checks.map((c) => (
            <tbody key={c.scenario} data-check={c.scenario}>
              <tr>
                <th scope="row">
                  <a href={href.eval()}>{c.scenario}</a> <span class="muted small">{c.because.join(', ')}{c.required ? ' · required' : ''}</span>
                </th>
                <td data-verdict={c.verdict}>{c.verdict}</td>
                <td>{c.head ? c.head.outcome : 'not measured at this commit'}</td>
                <td>{trunkCell(c, checks.trunkTip)}</td>
              </tr>
              {c.changed || c.blocks ? (
                <tr class="check-detail">
                  <td colSpan={4}>
                    {c.changed ? (
                      <dl class="small changed-definition" data-testid="changed-definition">
                        <dt>Fixed at dispatch</dt>
                        <dd>
                          <code>{c.changed.fixed.run}</code> → {c.head ? c.head.outcome : 'not run'}
                        </dd>
                        <dt>The branch's</dt>
                        <dd>
                          {c.changed.now.run === null ? 'removed' : <code>{c.changed.now.run}</code>}
                          {c.changed.now.run !== null ? ` → ${c.changed.headNow ? c.changed.headNow.outcome : 'not run'}` : ''}
                          {c.changed.accepted ? ` (accepted by ${c.changed.accepted.by}: ${c.changed.accepted.reason})` : ''}
                        </dd>
                      </dl>
                    ) : null}
                    {c.blocks ? <span class="muted small block-reason">{c.blocks}</span> : null}
                  </td>
                </tr>
              ) : null}
            </tbody>
          ))}
        </table>
      ) : null}
      {waiting.length && mayUse('POST /api/sessions/:id/accept') ? <AcceptChanged session={session} scenarios={waiting.map((c) => c.scenario)} /> : null}
      {checks.acceptances.map((a) => (
        <p key={a.at} class="muted" data-testid="acceptance">
          New definition of {a.scenarios.map((d) => d.id).join(', ')} accepted by <b>{a.by}</b>: {a.reason}
        </p>
      ))}
      {checks.overrides.map((o) => (
        <p key={o.at} class="muted" data-testid="override">
          Gate overridden by <b>{o.by}</b> for {o.scenarios.join(', ')}: {o.reason}
        </p>
      ))}
    </div>
  );
}

/**
 * A merged branch's checks: what each scenario read at the branch's last commit, and no verdict against
 * trunk (trunk now holds the branch, so "unmeasured at the tip" or "blocks" would describe a merge that
 * already happened).
 */
function MergedReadings({ checks }: { checks: ReviewBundle['checks'] }) {
  return (
    <table class="checks-table merged-readings">
      <thead>
        <tr>
          <th scope="col">Scenario</th>
          <th scope="col">At the branch's last commit</th>
        </tr>
      </thead>
      <tbody>
        {checks.checks.map((c) => (
          <tr key={c.scenario} data-check={c.scenario}>
            <th scope="row">
              <a href={href.eval()}>{c.scenario}</a>
            </th>
            <td>{c.head ? c.head.outcome : 'not measured'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A person accepts the branch's new check definitions, saying why (logged on the session). */
function AcceptChanged({ session, scenarios }: { session: string; scenarios: readonly string[] }) {
  const [reason, setReason] = useState('');
  const { busy, error, run } = useAction();
  return (
    <form
      class="inline accept-changed"
      onSubmit={(e) => {
        e.preventDefault();
        void run(async () => {
          await post(`api/sessions/${enc(session)}/accept`, { reason: reason.trim() });
          setReason('');
          gateRevision.value++;
        });
      }}
    >
      <label>
        <span>Accept the branch's definition of {scenarios.join(', ')}, because</span>
        <input value={reason} onInput={(e) => setReason((e.target as HTMLInputElement).value)} />
      </label>
      <button class="button" type="submit" disabled={busy || !reason.trim()}>
        Accept the new definition
      </button>
      <ErrorBox error={error} title="Not accepted" />
    </form>
  );
}
