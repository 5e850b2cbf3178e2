import { Answer } from './session/Answer';
import { useEffect, useState } from 'preact/hooks';
import { enc, get, post } from '../api';
import { href } from '../router';
import { refreshBoard, revision } from '../store';
import type { OverlapWith, SessionView as Session } from '../types';
import { Ago, ErrorBox, Section, useFetch } from '../ui';
import { OverlapFlags, SpawnWarnings } from './SessionChecks';
import { SessionLinks, SessionState } from './Sessions';
import { Confinement } from './session/Confinement';
import { SessionCost } from './session/Cost';
import { Lifecycle } from './session/Lifecycle';
import { PromptBox } from './session/PromptBox';
import { Review } from './session/Review';
import { TerminalCard } from './session/TerminalCard';
import { TAKES_NO_PROMPT } from './session/actions';
import { ShellNeeded } from './session/ShellNeeded';
import '../sessions.css';
import { mayUse } from '../host/hub';

/** States in which a session has a pane to watch (an interrupted one may still have its tmux session). */
const WITH_PANE = new Set(['starting', 'running', 'awaiting', 'review', 'merging', 'interrupted']);

/**
 * `#/sessions/<id>`: the session's state, its live terminal, the prompt box and raw keys, the timeline of
 * prompts, the lifecycle buttons (whose refusals show the server's message) and the review bundle.
 */
export function SessionView({ id }: { id: string }) {
  const rev = revision.value;
  const [local, setLocal] = useState<Session | null>(null);
  const [checked, setChecked] = useState(false);
  const [merged, setMerged] = useState(false);
  useEffect(() => setMerged(false), [id]);
  const f = useFetch(() => get<Session>(`api/sessions/${enc(id)}`), [id, rev]);
  // An action's answer shows until the next read lands, then that read does: cleared once the new data is
  // rendered, never before (clearing it as the read resolved rendered the older read for a moment, so the
  // page flickered back to the state before the action and its buttons were replaced under the pointer).
  useEffect(() => setLocal(null), [f.data]);
  const s = local?.id === id ? local : f.data?.id === id ? f.data : undefined;
  // Looking at the page is viewing the session: its unread marker clears (a refusal changes nothing).
  useEffect(() => {
    if (s?.unread && s.state !== 'closed') void post(`api/sessions/${enc(id)}/view`, {}).catch(() => {});
  }, [s?.unread, s?.state, id]);
  if (!s) return f.error ? <ErrorBox error={f.error} title={`Session ${id}`} /> : <p class="muted">Loading session…</p>;
  const hasPane = !!s.tmux && WITH_PANE.has(s.state) && s.reason !== 'tmux-gone';
  // A session no prompt reaches has no prompt box: its one Prompts card, the timeline, says so (a card of
  // its own repeated the heading, one above the other on a phone).
  const takesPrompts = !TAKES_NO_PROMPT.has(s.state);
  return (
    <div class="session-page">
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href={href.sessions()}>Sessions</a> / <code>{s.id}</code>
      </nav>
      <header class="page-head">
        <h1>{s.title || s.id}</h1>
        <p class="meta">
          <SessionState s={s} /> <span class="chip harness">{s.harness}</span> <Confinement c={s.confinement} /> spawned by <b>{s.by}</b> <Ago at={s.created} /> · active <Ago at={s.updatedAt} /> · branch <code>{s.branch}</code>
          <SessionLinks s={s} />
        </p>
      </header>
      <SpawnWarnings id={s.id} />
      <SessionCost s={s} />
      <OverlapFlags overlaps={(s as Session & { overlaps?: OverlapWith[] }).overlaps} />
      {s.detail ? (
        <p class="card state-detail" data-testid="state-detail">
          {s.state === 'awaiting' && s.reason === 'setup' ? 'The agent shows a setup dialog: ' : ''}
          {s.detail}
          {s.state === 'awaiting' && s.reason === 'setup' ? '. Answer it with the buttons below, or in the terminal.' : ''}
        </p>
      ) : null}
      <Answer s={s} onDone={() => void refreshBoard()} />
      <Lifecycle
        s={s}
        onDone={(v) => {
          if (v) setLocal(v);
          void refreshBoard();
        }}
        onChecked={() => setChecked(true)}
        merged={merged}
      />
      {hasPane ? (
        <TerminalCard id={s.id} key={`${s.id} ${s.tmux?.pane}`} viewOnly={!mayUse('GET /api/sessions/:id/socket')} />
      ) : (
        <p class="card muted" data-testid="no-pane">
          No live pane: the session is {s.state}
          {s.reason ? ` (${s.reason})` : ''}.{s.wip ? ` Its uncommitted work was saved on refs/trellis/wip/${s.id} (${s.wip.slice(0, 10)}).` : ''}
        </p>
      )}
      {/* The review bundle reads across the page's width, right under what the session is doing (issue 34). */}
      {/* A closed session spawned for an issue loads its bundle by itself: whether its change is merged (and
          its issue can be closed) is the bundle's to say. */}
      <Review key={s.id} id={s.id} state={s.state} issue={s.issue} onMerged={setMerged} auto={s.state === 'review' || checked || (s.state === 'closed' && !!s.issue)} version={`${s.state} ${s.reason ?? ''}`} />
      <div class={takesPrompts ? 'columns' : undefined}>
        {takesPrompts ? <div>{mayUse('POST /api/sessions/:id/prompt') ? <PromptBox s={s} onDone={(v) => setLocal(v)} /> : <ShellNeeded what="Sending a prompt" />}</div> : null}
        <Section title="Prompts" id="timeline-h">
          {takesPrompts ? null : (
            <p class="muted" data-testid="no-prompt">
              No prompt reaches a {s.state} session{s.state === 'quarantined' ? ': resume it first' : ''}.
            </p>
          )}
          {s.timeline.length ? (
            <ol class="prompts">
              {s.timeline.map((t, i) => (
                <li key={i}>
                  <p class="meta">
                    <b>{t.by}</b> <Ago at={t.at} />
                    {t.held ? <span class="chip reason"> queued</span> : null}
                  </p>
                  <pre>{t.body}</pre>
                  {t.held ? (
                    <p class="muted small" data-testid="held-prompt">
                      Not typed into the pane yet: {t.held}.
                    </p>
                  ) : null}
                </li>
              ))}
            </ol>
          ) : (
            <p class="muted">No prompts yet. The task was:</p>
          )}
          {!s.timeline.length ? <pre>{s.task}</pre> : null}
        </Section>
      </div>
    </div>
  );
}
