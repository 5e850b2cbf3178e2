import { useEffect, useState } from 'preact/hooks';
import { enc, get, post } from '../api';
import { href } from '../router';
import { board, narrowBoard, patchBoardSession, refreshBoard, streamRevision, worktreeRevision } from '../store';
import type { OverlapWith, SessionView as Session } from '../types';
import { Ago, ErrorBox, Section, useFetch } from '../ui';
import { OverlapFlags, SpawnWarnings } from './SessionChecks';
import { SessionLinks } from './Sessions';
import { Confinement } from './session/Confinement';
import { DecisionStrip } from './session/DecisionStrip';
import { SessionCost } from './session/Cost';
import { PromptBox } from './session/PromptBox';
import { Review, useReviewBundle } from './session/Review';
import { TerminalCard } from './session/TerminalCard';
import { TAKES_NO_PROMPT } from './session/actions';
import { ShellNeeded } from './session/ShellNeeded';
import '../sessions.css';
import { mayUse } from '../host/hub';
import { reviewVersion } from '../review-version';


/** States in which a session has a pane to watch (an interrupted one may still have its tmux session). */
const WITH_PANE = new Set(['starting', 'running', 'awaiting', 'review', 'merging', 'interrupted']);

/**
 * `#/sessions/<id>`: the session's state, its live terminal, the prompt box and raw keys, the timeline of
 * prompts, the lifecycle buttons (whose refusals show the server's message) and the review bundle.
 */
export function SessionView({ id }: { id: string }) {
  // Read again only on a change that may have moved this session (the stream names the ids that moved); a
  // change that moved only this session is patched into the board's entry (the header's counts) instead
  // of refetching the board, which catches up when the page goes.
  const moved = streamRevision('sessions', id);
  // Its overlaps move with any live session's branch, this one's or another's.
  const worktrees = worktreeRevision();
  useEffect(() => narrowBoard((kind, other) => kind === 'sessions' && other === id), [id]);
  const [local, setLocal] = useState<Session | null>(null);
  const [checked, setChecked] = useState(false);
  const [merged, setMerged] = useState(false);
  useEffect(() => setMerged(false), [id]);
  // A board read after a change this page was not named in (a resync, a worktree removed) that disagrees with
  // the page's read is a change the page missed: read again (never on the page's own patches, which agree).
  const [behind, setBehind] = useState('');
  const f = useFetch(() => get<Session>(`api/sessions/${enc(id)}`).then((v) => (patchBoardSession(v as unknown as Record<string, unknown> & { id: string }), v)), [id, moved, behind, worktrees]);
  const boardStatus = board.value?.sessions.find((s) => s.id === id)?.state;
  useEffect(() => {
    if (boardStatus && f.data?.id === id && !f.loading && boardStatus !== f.data.state) setBehind(boardStatus);
  }, [boardStatus, f.data, f.loading, id]);
  // An action's answer shows until the next read lands, then that read does: cleared once the new data is
  // rendered, never before (clearing it as the read resolved rendered the older read for a moment, so the
  // page flickered back to the state before the action and its buttons were replaced under the pointer).
  useEffect(() => setLocal(null), [f.data]);
  const s = local?.id === id ? local : f.data?.id === id ? f.data : undefined;
  // The review bundle, read once for the strip's verdict and next step and for the bundle's card below it.
  // A closed session spawned for an issue loads its bundle by itself: whether its change is merged (and
  // its issue can be closed) is the bundle's to say.
  const rb = useReviewBundle(id, s?.branch ?? '', !!s && (s.state === 'review' || checked || (s.state === 'closed' && !!s.issue)), s ? reviewVersion(s) : '');
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
      </header>
      <DecisionStrip
        s={s}
        bundle={rb.bundle}
        loading={rb.want && !rb.bundle && !rb.error}
        merged={merged}
        onDone={(v) => {
          if (v) setLocal(v);
          void refreshBoard();
        }}
        onChecked={() => setChecked(true)}
      />
      <p class="meta">
        <span class="chip harness">{s.harness}</span> <Confinement c={s.confinement} /> started by <b>{s.by}</b> <Ago at={s.created} /> · active <Ago at={s.updatedAt} /> · branch <code>{s.branch}</code>
        <SessionLinks s={s} />
      </p>
      <SpawnWarnings id={s.id} />
      <SessionCost s={s} />
      <OverlapFlags overlaps={(s as Session & { overlaps?: OverlapWith[] }).overlaps} />
      {s.detail ? (
        <p class="card state-detail" data-testid="state-detail">
          {s.state === 'awaiting' && s.reason === 'setup' ? 'The agent shows a setup dialog: ' : ''}
          {s.detail}
          {s.state === 'awaiting' && s.reason === 'setup' ? '. Answer it with the buttons above, or in the terminal.' : ''}
        </p>
      ) : null}
      {hasPane ? (
        <TerminalCard id={s.id} key={`${s.id} ${s.tmux?.pane}`} viewOnly={!mayUse('GET /api/sessions/:id/socket')} />
      ) : (
        <p class="card muted" data-testid="no-pane">
          No live pane: the session is {s.state}
          {s.reason ? ` (${s.reason})` : ''}.{s.wip ? ` Its uncommitted work was saved on refs/trellis/wip/${s.id} (${s.wip.slice(0, 10)}).` : ''}
        </p>
      )}
      {/* The review bundle reads across the page's width, right under what the session is doing (issue 34). */}
      <Review id={s.id} rb={rb} onMerged={setMerged} />
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
