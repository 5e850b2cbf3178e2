import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, apiUrl, enc, get, post } from '../api';
import { href } from '../router';
import { refreshBoard, revision } from '../store';
import type { OverlapWith, PromptResult, ReviewBundle, SessionView as Session } from '../types';
import { shellWord, uploadFile } from '../uploads';
import { Ago, Diff, ErrorBox, plural, Section, useFetch } from '../ui';
import type { PaneLinkState, PaneTerminal } from '../xterm-terminal';
import { ChecksPanel, OverlapFlags, SpawnWarnings } from './SessionChecks';
import { SessionLinks, SessionState } from './Sessions';
import '../sessions.css';

/** States in which a session has a pane to watch (an interrupted one may still have its tmux session). */
const WITH_PANE = new Set(['starting', 'running', 'awaiting', 'review', 'merging', 'interrupted']);

/** Keys the raw-key buttons send (names from the server's allowlist), with what they are called here. */
const RAW_KEYS: readonly [string, string][] = [
  ['Escape', 'Esc'],
  ['C-c', 'Ctrl-C'],
  ['C-d', 'Ctrl-D'],
  ['Tab', 'Tab'],
  ['Up', '↑'],
  ['Down', '↓'],
  ['Enter', 'Enter'],
];

/**
 * `#/sessions/<id>`: the session's state, its live terminal, the prompt box and raw keys, the timeline of
 * prompts, the lifecycle buttons (whose refusals show the server's message) and the review bundle.
 */
export function SessionView({ id }: { id: string }) {
  const rev = revision.value;
  const [local, setLocal] = useState<Session | null>(null);
  const f = useFetch(() => get<Session>(`api/sessions/${enc(id)}`).then((s) => (setLocal(null), s)), [id, rev]);
  const s = local?.id === id ? local : f.data?.id === id ? f.data : undefined;
  // Looking at the page is viewing the session: its unread marker clears (a refusal changes nothing).
  useEffect(() => {
    if (s?.unread && s.state !== 'closed') void post(`api/sessions/${enc(id)}/view`, {}).catch(() => {});
  }, [s?.unread, s?.state, id]);
  if (!s) return f.error ? <ErrorBox error={f.error} title={`Session ${id}`} /> : <p class="muted">Loading session…</p>;
  const hasPane = !!s.tmux && WITH_PANE.has(s.state) && s.reason !== 'tmux-gone';
  return (
    <div class="session-page">
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href={href.sessions()}>Sessions</a> / <code>{s.id}</code>
      </nav>
      <header class="page-head">
        <h1>{s.title || s.id}</h1>
        <p class="meta">
          <SessionState s={s} /> <span class="chip harness">{s.harness}</span> spawned by <b>{s.by}</b> <Ago at={s.created} /> · active <Ago at={s.updatedAt} /> · branch <code>{s.branch}</code>
          <SessionLinks s={s} />
        </p>
      </header>
      <SpawnWarnings id={s.id} />
      <OverlapFlags overlaps={(s as Session & { overlaps?: OverlapWith[] }).overlaps} />
      {s.detail ? (
        <p class="card state-detail" data-testid="state-detail">
          {s.state === 'awaiting' && s.reason === 'setup' ? 'The agent shows a setup dialog: ' : ''}
          {s.detail}
          {s.state === 'awaiting' && s.reason === 'setup' ? '. Answer it in the terminal below.' : ''}
        </p>
      ) : null}
      <Lifecycle
        s={s}
        onDone={(v) => {
          if (v) setLocal(v);
          void refreshBoard();
        }}
      />
      {hasPane ? (
        <TerminalCard id={s.id} key={`${s.id} ${s.tmux?.pane}`} />
      ) : (
        <p class="card muted" data-testid="no-pane">
          No live pane: the session is {s.state}
          {s.reason ? ` (${s.reason})` : ''}.{s.wip ? ` Its uncommitted work was saved on refs/trellis/wip/${s.id} (${s.wip.slice(0, 10)}).` : ''}
        </p>
      )}
      <div class="columns">
        <div>
          <PromptBox s={s} onDone={(v) => setLocal(v)} />
          <Review id={s.id} auto={s.state === 'review'} version={`${s.state} ${s.reason ?? ''}`} />
        </div>
        <Section title="Prompts" id="timeline-h">
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

/** Resume, interrupt, review, merge, close, quarantine: each a POST; a refused one shows the server's reason. */
function Lifecycle({ s, onDone }: { s: Session; onDone: (v: Session | null) => void }) {
  const [busy, setBusy] = useState('');
  const [err, setErr] = useState<unknown>(null);
  const [note, setNote] = useState('');
  const [reason, setReason] = useState('');
  const [asking, setAsking] = useState('');
  const [override, setOverride] = useState('');
  if (s.state === 'closed') return null;
  const act = async (verb: string, body: object = {}) => {
    setBusy(verb);
    setErr(null);
    setNote('');
    try {
      const r = await post<Session | { dispatched: true; delivered?: boolean; reason?: string } | { readings: unknown[]; checks: { line: string } }>(`api/sessions/${enc(s.id)}/${verb}`, body);
      if ('readings' in r) {
        setNote(`Checks run: ${r.readings.length} reading(s) filed. ${r.checks.line}`);
        onDone(null);
      } else if ('dispatched' in r) {
        setNote(r.delivered === false ? `Merge dispatched to the agent, but not delivered: ${r.reason ?? 'unknown reason'}` : 'Merge dispatched: the agent merges its branch; the main checkout is never touched from here.');
        onDone(null);
      } else onDone(r);
    } catch (e) {
      setErr(e);
    } finally {
      setBusy('');
    }
  };
  // A destructive verb asks first, in the page (no browser dialog): the button turns into Yes / Cancel.
  const button = (verb: string, label: string, opts: { confirm?: string; body?: () => object } = {}) =>
    asking === verb ? (
      <span class="confirm" role="group" aria-label={`Confirm: ${label}`}>
        <span>{opts.confirm}</span>
        <button class="button primary" onClick={() => (setAsking(''), void act(verb, opts.body?.() ?? {}))}>
          Yes, {label.toLowerCase()}
        </button>
        <button class="button" onClick={() => setAsking('')}>
          Cancel
        </button>
      </span>
    ) : (
      <button class="button" disabled={!!busy} onClick={() => (opts.confirm ? setAsking(verb) : void act(verb, opts.body?.() ?? {}))}>
        {busy === verb ? `${label}…` : label}
      </button>
    );
  return (
    <div class="lifecycle">
      <div class="actions" role="group" aria-label="Session actions">
        {s.state === 'interrupted' ? button('resume', 'Resume') : button('interrupt', 'Interrupt')}
        {button('review', 'Request review')}
        {button('check', 'Run checks')}
        {button('merge', 'Merge', { body: () => (override.trim() ? { override: override.trim() } : {}) })}
        <span class="inline">
          <label>
            <span>Merge anyway, because</span>
            <input value={override} onInput={(e) => setOverride((e.target as HTMLInputElement).value)} placeholder="if checks block it" />
          </label>
        </span>
        {button('close', 'Close', { confirm: `Close session ${s.id}? Its tmux session and worktree are removed; uncommitted work is saved on refs/trellis/wip/${s.id}.` })}
        <span class="inline">
          <label>
            <span>Quarantine reason</span>
            <input value={reason} onInput={(e) => setReason((e.target as HTMLInputElement).value)} placeholder="by user" />
          </label>
          {button('quarantine', 'Quarantine', { body: () => (reason.trim() ? { reason: reason.trim() } : {}) })}
        </span>
      </div>
      <ErrorBox error={err} title={err instanceof ApiError && err.status === 409 ? 'The server refused' : 'That did not work'} />
      {note ? (
        <p class="notice" role="status">
          {note}
        </p>
      ) : null}
    </div>
  );
}

/** The terminal card: link state, read-only toggle, file paste, the xterm itself (lazy), raw keys. */
function TerminalCard({ id }: { id: string }) {
  const frame = useRef<HTMLDivElement>(null);
  const [term, setTerm] = useState<PaneTerminal | null>(null);
  const [loadErr, setLoadErr] = useState<unknown>(null);
  const [readOnly, setReadOnly] = useState(false);
  const [busy, setBusy] = useState('');
  const [err, setErr] = useState<unknown>(null);
  const [typed, setTyped] = useState('');
  const termRef = useRef<PaneTerminal | null>(null);

  /** Uploads each file and types its path (shell-quoted) into the pane, like a paste would. */
  const paste = async (files: File[]) => {
    setErr(null);
    setTyped('');
    for (const file of files) {
      setBusy(`Uploading ${file.name}…`);
      try {
        const up = await uploadFile(file);
        const t = termRef.current;
        if (!t || !t.type(`${shellWord(up.path)} `)) throw new Error(`uploaded to ${up.path}, but the terminal is ${t?.state.value === 'live' ? 'read-only' : 'not connected'}: nothing was typed`);
        setTyped(up.path);
        t.focus();
      } catch (e) {
        setErr(e);
        break;
      } finally {
        setBusy('');
      }
    }
  };

  useEffect(() => {
    let live = true;
    let made: PaneTerminal | null = null;
    import('../xterm-terminal').then(
      ({ PaneTerminal }) => {
        if (!live || !frame.current) return;
        made = new PaneTerminal(frame.current, { url: apiUrl(`api/sessions/${enc(id)}/socket`), readOnly: false, onFiles: (f) => void paste(f) }).start();
        termRef.current = made;
        setTerm(made);
        made.focus();
      },
      (e) => live && setLoadErr(e),
    );
    return () => {
      live = false;
      made?.dispose();
      termRef.current = null;
    };
  }, [id]);

  const key = async (k: string) => {
    setErr(null);
    // Sending keys is typing: this viewer now drives the pane's size.
    termRef.current?.claim();
    try {
      await post(`api/sessions/${enc(id)}/rawkey`, { keys: [k] });
    } catch (e) {
      setErr(e);
    }
    termRef.current?.focus();
  };
  const state: PaneLinkState = term?.state.value ?? 'connecting';
  return (
    <section class="card terminal-card" aria-labelledby="terminal-h">
      <div class="row-head terminal-head">
        <h2 id="terminal-h">Terminal</h2>
        <span class={`link pane-link link-${state === 'ended' ? 'ended' : state}`} role="status" data-testid="pane-state">
          <span class="dot" aria-hidden="true" />
          {state === 'reconnecting' ? 'reconnecting…' : state === 'connecting' ? 'connecting…' : state}
        </span>
        {term?.size.value ? (
          <span class="muted size">
            {term.size.value.cols}×{term.size.value.rows}
          </span>
        ) : null}
        <label class="check">
          <input
            type="checkbox"
            checked={readOnly}
            onChange={(e) => {
              const ro = (e.target as HTMLInputElement).checked;
              setReadOnly(ro);
              term?.setReadOnly(ro);
            }}
          />{' '}
          Read-only
        </label>
        <label class="button small file-paste">
          Paste a file
          <input
            type="file"
            multiple
            aria-label="Paste a file into the terminal (uploads it and types its path)"
            onChange={(e) => {
              const input = e.target as HTMLInputElement;
              const files = Array.from(input.files ?? []);
              input.value = '';
              if (files.length) void paste(files);
            }}
          />
        </label>
      </div>
      <ErrorBox error={loadErr} title="The terminal could not load" />
      <div class="terminal-frame" ref={frame} data-testid="terminal" />
      {term?.notice.value ? (
        <p class="notice" role="status" data-testid="pane-notice">
          {term.notice.value}
        </p>
      ) : null}
      <div class="raw-keys" role="group" aria-label="Raw keys">
        <span class="muted">Keys:</span>
        {RAW_KEYS.map(([k, label]) => (
          <button key={k} class="button small" onClick={() => void key(k)} title={`send ${k} to the pane`} disabled={readOnly}>
            {label}
          </button>
        ))}
        {busy ? <span class="muted">{busy}</span> : null}
        {typed ? (
          <span class="muted" data-testid="typed-path">
            typed <code>{typed}</code>
          </span>
        ) : null}
      </div>
      <ErrorBox error={err} title="Not sent" />
    </section>
  );
}

/** The prompt box: the whole prompt goes on the timeline first, then into the pane (200), or not (202, with why). */
function PromptBox({ s, onDone }: { s: Session; onDone: (v: Session) => void }) {
  const [body, setBody] = useState('');
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState<unknown>(null);
  const [note, setNote] = useState('');
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setErr(null);
    setNote('');
    try {
      const r = await post<PromptResult & { session: Session }>(`api/sessions/${enc(s.id)}/prompt`, { body });
      setNote(r.delivered ? 'Delivered to the pane.' : `Queued on the timeline, not typed into the pane: ${r.reason ?? 'unknown reason'}.`);
      setBody('');
      onDone(r.session);
    } catch (e) {
      setErr(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="card prompt-box" onSubmit={submit} aria-labelledby="prompt-h">
      <h2 id="prompt-h">Send a prompt</h2>
      <label>
        <span>Prompt text</span>
        <textarea
          rows={4}
          value={body}
          onInput={(e) => setBody((e.target as HTMLTextAreaElement).value)}
          onKeyDown={(e) => e.key === 'Enter' && (e.ctrlKey || e.metaKey) && (e.currentTarget as HTMLTextAreaElement).form?.requestSubmit()}
        />
      </label>
      <p class="muted small">
        Sent whole (a bracketed paste, then Enter) and kept on the session's timeline; typed only when the agent waits for a prompt, else queued and delivered when it
        next does (answer a dialog with raw keys). Ctrl+Enter sends.
      </p>
      <ErrorBox error={err} title={err instanceof ApiError && err.status === 502 ? 'The prompt was refused' : 'Not sent'} />
      {note ? (
        <p class="notice" role="status" data-testid="prompt-result">
          {note}
        </p>
      ) : null}
      <div>
        <button class="button primary" type="submit" disabled={busy || !body}>
          {busy ? 'Sending…' : 'Send prompt'}
        </button>
      </div>
    </form>
  );
}

/**
 * The review bundle as a diff viewer: the merge pre-flight, commits, changed nodes with open issues, files.
 * `version` names the session's own state (and its sub-reason): the bundle (git runs for it each time) is
 * fetched again when that changes, not on every board revision another write caused, nor on a prompt or a
 * viewing that touches the session but not its branch.
 */
function Review({ id, auto, version }: { id: string; auto: boolean; version: string }) {
  const [want, setWant] = useState(auto);
  useEffect(() => {
    if (auto) setWant(true);
  }, [auto]);
  const r = useFetch(() => (want ? get<ReviewBundle>(`api/sessions/${enc(id)}/review`) : Promise.resolve(undefined)), [id, want, version]);
  const b = r.data;
  return (
    <section class="card review" aria-labelledby="review-h">
      <div class="row-head">
        <h2 id="review-h">Review bundle</h2>
        {!want ? (
          <button class="button small" onClick={() => setWant(true)}>
            Load the review bundle
          </button>
        ) : null}
      </div>
      {want && !b && !r.error ? <p class="muted">Building the review bundle…</p> : null}
      <ErrorBox error={r.error} title="No review bundle" />
      {b ? (
        <>
          <p class="meta" data-testid="preflight">
            Merge pre-flight into <code>{b.preflight.trunk}</code>:{' '}
            <span class={`chip ${b.preflight.result === 'clean' ? 'resolved' : 'problem'}`}>{b.preflight.result === 'clean' ? 'merges cleanly' : `${plural(b.preflight.conflicts.length, 'conflicting path')}`}</span>
            {b.preflight.trunkMovedAhead ? <span class="chip unresolved">trunk moved ahead of the base</span> : null}
          </p>
          <ChecksPanel checks={b.checks} />
          {b.preflight.conflicts.length ? (
            <ul class="conflicts">
              {b.preflight.conflicts.map((c) => (
                <li key={c}>
                  <code>{c}</code>
                </li>
              ))}
            </ul>
          ) : null}
          <p class="meta">
            <code>{b.base.slice(0, 10)}</code> → <code>{b.head.slice(0, 10)}</code> · {plural(b.commits.length, 'commit')} · {plural(b.files.length, 'file')}
          </p>
          {b.commits.length ? (
            <ul class="list compact commits">
              {b.commits.map((c) => (
                <li key={c.hash}>
                  <code>{c.hash.slice(0, 10)}</code> {c.subject} <span class="muted">{c.author}</span> <Ago at={c.at} />
                </li>
              ))}
            </ul>
          ) : null}
          {b.nodes.length ? (
            <>
              <h3>Spec nodes changed</h3>
              <ul class="list compact">
                {b.nodes.map((n) => (
                  <li key={n.id}>
                    <a href={href.node(n.id)}>{n.id}</a>
                    {n.openIssues.map((i) => (
                      <a key={i.id} class="chip status-open" href={href.issue(i.id)}>
                        {i.concern}
                      </a>
                    ))}
                  </li>
                ))}
              </ul>
            </>
          ) : null}
          {b.files.map((file) => (
            <details key={file.path} class="file-diff" open={b.files.length <= 5}>
              <summary>
                <span class="chip">{file.status}</span> <code>{file.path}</code>
              </summary>
              <Diff text={file.diff} label={`Diff of ${file.path}`} />
            </details>
          ))}
        </>
      ) : null}
    </section>
  );
}
