import { get } from '../api';
import { href } from '../router';
import { board, revision } from '../store';
import type { ScoreCell, Scoreboard } from '../types';
import { Ago, ErrorBox, OutcomeMark, plural, useFetch } from '../ui';
import '../sessions.css';

/**
 * `#/eval`: the scoreboard (GET /api/eval, DESIGN.md §12): every declared scenario × every scope with its
 * latest reading, its last outcomes and its open eval remarks. It refetches on every change the board's
 * stream announces (a reading filed by `trellis eval record` or `eval run` is one).
 */
export function EvalView() {
  const rev = revision.value;
  const f = useFetch(() => get<Scoreboard>('api/eval'), [rev]);
  const b = f.data;
  if (!b) return f.error ? <ErrorBox error={f.error} title="Cannot load the scoreboard" /> : <p class="muted">Loading the scoreboard…</p>;
  const scopes = b.scopes.map((s) => s.name);
  // A scope named by a session id is that session's worktree: link it to the session's page.
  const sessions = new Set((board.value?.sessions ?? []).map((s) => s.id));
  // Scopes that only hold old readings (a removed worktree) still get a column, after the live ones.
  for (const row of b.scenarios) for (const c of row.cells) if (!scopes.includes(c.scope)) scopes.push(c.scope);
  return (
    <div class="eval">
      <header class="page-head">
        <h1>Eval scoreboard</h1>
        <p class="meta">
          {plural(b.scenarios.length, 'scenario')} × {plural(scopes.length, 'scope')}. Open a result to see its output and history, or run it again; from a terminal, <code>trellis eval run</code>.
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
                  </th>
                ))}
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
                    <Cell key={scope} cell={cellOf(row.id, row.cells.find((c) => c.scope === scope))} />
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

function Cell({ cell }: { cell: (ScoreCell & { scenario: string }) | undefined }) {
  if (!cell) return <td class="muted">—</td>;
  const r = cell.latest;
  return (
    <td class={`cell ${cell.live ? '' : 'gone'}`} data-scope={cell.scope}>
      {r ? (
        <>
          <a class={`chip outcome outcome-${r.outcome}`} data-testid="outcome" href={href.scenario(cell.scenario, cell.scope)} title="Output, history and Run">
            <OutcomeMark outcome={r.outcome} />
            {r.outcome}
            {r.score !== undefined ? ` · ${r.score}` : ''}
          </a>
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

const cellOf = (scenario: string, c: ScoreCell | undefined) => (c ? { ...c, scenario } : undefined);
