import { useState } from 'preact/hooks';
import { apiUrl, enc, evidenceHead, get, post } from '../api';
import { href, route } from '../router';
import { board, revision } from '../store';
import type { ScopeInfo } from '../types';
import { Ago, ErrorBox, OutcomeMark, plural, Section, useFetch, useAction } from '../ui';
import type { EvalDetail } from '../../../projections/eval-detail.js';
import '../sessions.css';
import { mayUse } from '../host/hub';

/** How much of a reading's output the page shows (the rest is one click away, as a download). */
const OUTPUT_SHOWN = 64 * 1024;

/** A scenario id as a path for `/api/eval/<id>`: segments encoded, slashes kept. */
const scenarioPath = (id: string) => id.split('/').map(enc).join('/');

/**
 * `#/eval/<scenario>?scope=<s>`: why a scenario reads as it does in one scope (GET /api/eval/<scenario>):
 * its state, its declaration, the latest reading's output, every reading before it, its open remarks,
 * and Run, which runs the command in that scope's worktree and files a new reading.
 */
export function ScenarioView({ id }: { id: string }) {
  const scope = route.value.query.get('scope') ?? '';
  const rev = revision.value;
  const [ran, setRan] = useState(0);
  const d = useFetch(() => get<EvalDetail>(`api/eval/${scenarioPath(id)}${scope ? `?scope=${enc(scope)}` : ''}`), [id, scope, rev, ran]);
  const scopes = useFetch(() => get<{ scopes: readonly ScopeInfo[] }>('api/eval'), [rev]);
  const x = d.data;
  return (
    <div class="scenario-page">
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href={href.eval()}>Eval</a> / <code>{id}</code>
      </nav>
      <header class="page-head">
        <h1>
          <code>{id}</code>
        </h1>
        {x ? (
          <p class="meta">
            in <b>{x.scope}</b> · <span class={`chip detail-state state-${x.state}`}>{x.state.replace(/-/g, ' ')}</span>
            {x.declaration ? (
              <>
                {' '}
                · declared by <a href={href.node(x.declaration.node)}>{x.declaration.node}</a> · <code>{x.declaration.run}</code> · timeout {x.declaration.timeoutS} s
              </>
            ) : null}
          </p>
        ) : null}
      </header>
      <ErrorBox error={d.error} title="This scenario cannot be shown" />
      {x?.fallback ? (
        <p class="notice" role="status">
          Showing trunk: {x.reason}
        </p>
      ) : null}
      {x?.problem ? <ErrorBox error={{ message: x.problem }} title="Its readings cannot be read" /> : null}
      <RunBar id={id} scope={x?.scope ?? (scope || 'trunk')} scopes={(scopes.data?.scopes ?? []).map((s) => s.name)} onRan={() => setRan((n) => n + 1)} />
      {x ? (
        <div class="columns">
          <div>
            <Section title="Latest reading" id="latest-h">
              {x.reading ? (
                <>
                  <p class="meta" data-testid="latest-reading">
                    <span class={`chip outcome outcome-${x.reading.outcome}`}>
                      <OutcomeMark outcome={x.reading.outcome} />
                      {x.reading.outcome}
                      {x.reading.score !== undefined ? ` · ${x.reading.score}` : ''}
                    </span>{' '}
                    by {x.reading.by} <Ago at={x.reading.at} /> · {x.reading.durationMs} ms
                    {x.reading.commit ? (
                      <>
                        {' '}
                        · at <code>{x.reading.commit.slice(0, 8)}</code>
                      </>
                    ) : null}
                  </p>
                  {x.reading.output ? <Output hash={x.reading.output} /> : <p class="muted">This reading kept no output (it was recorded, not run).</p>}
                </>
              ) : (
                <p class="muted" data-testid="no-reading">
                  Not measured in {x.scope} yet. Run it above.
                </p>
              )}
            </Section>
          </div>
          <div>
            <Section title={`History (${plural(x.readings.length, 'reading')})`} id="readings-h">
              {x.readings.length ? (
                <ol class="readings" data-testid="readings">
                  {x.readings.map((r) => (
                    <li key={r.id}>
                      <span class={`chip outcome outcome-${r.outcome}`}>
                        <OutcomeMark outcome={r.outcome} />
                        {r.outcome}
                      </span>{' '}
                      <Ago at={r.at} /> · {r.by} · {r.durationMs} ms
                      {r.output ? (
                        <>
                          {' '}
                          ·{' '}
                          <a href={apiUrl(`api/evidence/${enc(r.output)}`)} download={`${id.replace(/\//g, '-')}-${r.id}.txt`}>
                            output
                          </a>
                        </>
                      ) : null}
                    </li>
                  ))}
                </ol>
              ) : (
                <p class="muted">No readings yet.</p>
              )}
            </Section>
            {x.remarks.length ? (
              <Section title={plural(x.remarks.length, 'open remark')} id="remarks-h">
                <ul class="list compact">
                  {x.remarks.map((m) => (
                    <li key={m.thread}>
                      {m.concern} <span class="muted">by {m.by}</span>
                    </li>
                  ))}
                </ul>
              </Section>
            ) : null}
          </div>
        </div>
      ) : d.loading ? (
        <p class="muted">Loading the scenario…</p>
      ) : null}
    </div>
  );
}

/** Run: the scope to run in (trunk or a session's worktree) and the button; the answer is the new reading. */
function RunBar({ id, scope, scopes, onRan }: { id: string; scope: string; scopes: readonly string[]; onRan: () => void }) {
  const action = useAction();
  const { busy, error: err } = action;
  if (!mayUse('POST /api/eval/*')) return null;
  const sessions = new Map((board.value?.sessions ?? []).map((s) => [s.id, s.title]));
  const run = () =>
    action.run(async () => {
      await post(`api/eval/${scenarioPath(id)}/run`, { scope });
      onRan();
    });
  return (
    <div class="card run-bar">
      <div class="inline">
        <label>
          <span>Scope</span>
          <select value={scope} onChange={(e) => (location.hash = href.scenario(id, (e.currentTarget as HTMLSelectElement).value))}>
            {[...new Set(['trunk', ...scopes, scope])].map((s) => (
              <option key={s} value={s}>
                {sessions.has(s) ? `session ${s}: ${sessions.get(s)}` : s}
              </option>
            ))}
          </select>
        </label>
        <button class="button primary" onClick={run} disabled={busy}>
          {busy ? 'Running…' : 'Run'}
        </button>
        <span class="muted small">Runs the declared command in that scope’s worktree and files a reading with its output.</span>
      </div>
      <ErrorBox error={err} title="The run did not file a reading" />
    </div>
  );
}

/** A reading's output (evidence), its first 64 KB as text. */
function Output({ hash }: { hash: string }) {
  const t = useFetch(async () => {
    const head = await evidenceHead(hash, OUTPUT_SHOWN);
    if (head.status >= 300) throw new Error(`the output ${hash.slice(0, 12)} could not be read (${head.status})`);
    return { text: new TextDecoder().decode(head.bytes), cut: (head.total ?? 0) > OUTPUT_SHOWN };
  }, [hash]);
  return (
    <div class="output">
      <ErrorBox error={t.error} title="No output" />
      {t.data ? (
        <>
          <pre class="output-text" data-testid="reading-output" tabIndex={0}>
            {t.data.text || '(the command printed nothing)'}
          </pre>
          <p class="muted small">
            {t.data.cut ? 'The first 64 KB. ' : ''}
            <a href={apiUrl(`api/evidence/${enc(hash)}`)} download={`output-${hash.slice(0, 12)}.txt`}>
              Download the whole output
            </a>
          </p>
        </>
      ) : null}
    </div>
  );
}
