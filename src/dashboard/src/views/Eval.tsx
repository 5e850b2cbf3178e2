import { useState } from 'preact/hooks';
import { get } from '../api';
import { href } from '../router';
import { board, revision } from '../store';
import type { ScoreCell, Scoreboard } from '../types';
import { Ago, ErrorBox, OutcomeMark, plural, useFetch } from '../ui';
import { predatesWords } from '../../../projections/scoreboard.js';
import '../sessions.css';

/**
 * `#/eval`: the scoreboard (GET /api/eval, DESIGN.md §12): every declared scenario × every scope with its
 * latest reading, its last outcomes and its open eval remarks. It refetches on every change the board's
 * stream announces (a reading filed by `trellis eval record` or `eval run` is one).
 */
export function EvalView() {
  const rev = revision.value;
  const [showGone, setShowGone] = useState(false);
  const f = useFetch(() => get<Scoreboard>('api/eval'), [rev]);
  const b = f.data;
  if (!b) return f.error ? <ErrorBox error={f.error} title="Cannot load the scoreboard" /> : <p class="muted">Loading the scoreboard…</p>;
  const live = b.scopes.map((s) => s.name);
  // A scope named by a session id is that session's worktree: link it to the session's page.
  const sessions = new Set((board.value?.sessions ?? []).map((s) => s.id));
  // Scopes that only hold old readings (a closed session, a removed worktree) fold into one column, opened on demand.
  const gone: string[] = [];
  for (const row of b.scenarios) for (const c of row.cells) if (!live.includes(c.scope) && !gone.includes(c.scope)) gone.push(c.scope);
  const scopes = showGone ? [...live, ...gone] : live;
  return (
    <div class="eval">
      <header class="page-head">
        <h1>Eval scoreboard</h1>
        <p class="meta">
          {plural(b.scenarios.length, 'scenario')} × {plural(scopes.length, 'scope')}. Open a result to see its output and history, or run it again.
        </p>
      </header>
      {!b.scenarios.length ? (
        <p class="card muted" data-testid="no-scenarios">
          No scenarios are declared. A spec node declares them in its front matter: <code>scenarios: [{'{'} id: checkout/pays, run: "npm test -- checkout" {'}'}]</code>.
        </p>
      ) : (
        <div class="table-wrap">
          <table class="scoreboard" aria-label="Scoreboard">
            <thead>
              <tr>
                <th scope="col">Scenario</th>
                {scopes.map((s) => (
                  <th scope="col" key={s}>
                    {sessions.has(s) ? <a href={href.session(s)}>session {s}</a> : s}
                    {!live.includes(s) ? <div class="muted small">closed</div> : null}
                  </th>
                ))}
                {gone.length ? (
                  <th scope="col" data-testid="gone-scopes">
                    <button class="button small" aria-expanded={showGone} onClick={() => setShowGone(!showGone)}>
                      {showGone ? 'Fold' : 'Show'} {plural(gone.length, 'closed session')}
                    </button>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {b.scenarios.map((row) => (
                <tr key={row.id} data-scenario={row.id}>
                  <th scope="row">
                    <a href={href.scenario(row.id)}>
                      <code>{row.id}</code>
                    </a>
                    <div class="muted small">
                      {row.node !== null ? (
                        <>
                          <a href={href.node(row.node)}>{row.node}</a> · <code>{row.run}</code>
                        </>
                      ) : (
                        'declared nowhere live (its worktree was removed); readings kept'
                      )}
                    </div>
                    {row.remarks.length ? <div class="chip unresolved">{plural(row.remarks.length, 'open remark')}</div> : null}
                  </th>
                  {scopes.map((scope) => (
                    <Cell key={scope} cell={cellOf(row.id, row.cells.find((c) => c.scope === scope))} head={b.scopes.find((x) => x.name === scope)?.head ?? null} />
                  ))}
                  {gone.length ? <td class="muted small">{showGone ? '' : foldedSummary(row.cells.filter((c) => gone.includes(c.scope)))}</td> : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

function Cell({ cell, head }: { cell: (ScoreCell & { scenario: string }) | undefined; head: string | null }) {
  if (!cell) return <td class="muted">—</td>;
  const r = cell.latest;
  // A reading older than its scope's tip (trunk after a merge) says so plainly, and dims: it is not now's.
  const predates = predatesWords(cell, head);
  return (
    <td class={`cell ${cell.live ? '' : 'gone'}`} data-scope={cell.scope}>
      {r ? (
        <>
          <a class={`chip outcome outcome-${r.outcome}${predates ? ' predates' : ''}`} data-testid="outcome" href={href.scenario(cell.scenario, cell.scope)} title={predates ? `Measured before the tip: ${predates}` : 'Output, history and Run'}>
            <OutcomeMark outcome={r.outcome} />
            {r.outcome}
            {r.score !== undefined ? ` · ${r.score}` : ''}
          </a>
          {predates ? (
            <div class="chip unresolved predates-note" data-testid="stale">
              {predates.charAt(0).toUpperCase() + predates.slice(1, predates.indexOf('; run it again'))}.{' '}
              <a href={href.scenario(cell.scenario, cell.scope)}>Run it again</a> to measure the tip.
            </div>
          ) : null}
          <div class="muted small">
            by {r.by} <Ago at={r.at} />
            {r.commit ? (
              <>
                {' '}
                at <code>{r.commit.slice(0, 8)}</code>
              </>
            ) : null}
          </div>
          {cell.last.length > 1 ? (
            <div class="history" aria-label={`last outcomes, newest first: ${cell.last.join(', ')}`}>
              {cell.last.map((o, i) => (
                <span key={i} class={`tick outcome-${o}`} title={o} />
              ))}
            </div>
          ) : null}
        </>
      ) : (
        <a class="muted" href={href.scenario(cell.scenario, cell.scope)}>
          {cell.declared ? 'unmeasured: run it' : 'not declared here'}
        </a>
      )}
      {cell.remarks.length ? (
        <div>
          {cell.remarks.map((m) => (
            <span key={m.thread} class="chip unresolved" title={`${m.concern} (by ${m.by})`}>
              remark: {m.concern}
            </span>
          ))}
        </div>
      ) : null}
      {!cell.live ? <div class="muted small">scope gone</div> : null}
    </td>
  );
}

/** A folded row's closed-session readings in words: how many scopes measured it, and their latest outcome. */
function foldedSummary(cells: readonly ScoreCell[]): string {
  const measured = cells.filter((c) => c.latest);
  if (!measured.length) return '—';
  const latest = measured.map((c) => c.latest!).sort((a, b) => (a.at < b.at ? 1 : -1))[0]!;
  return `${plural(measured.length, 'closed session')}: latest ${latest.outcome}`;
}

const cellOf = (scenario: string, c: ScoreCell | undefined) => (c ? { ...c, scenario } : undefined);
