import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, enc, get, loadPageAuthor, pageAuthor, post } from '../api';
import { ConfirmButton } from '../confirm';
import { size, wordsFor } from '../error-words';
import { href } from '../router';
import { narrowBoard, revision, streamRevision } from '../store';
import type { Issue, IssueEvent, IssueTimeline, Reply } from '../types';
import { Ago, ErrorBox, Labels, Markdown, StatusChip, StoreChip, useFetch, useAction } from '../ui';
import { issueList } from './Issues';
import { SpawnForIssue } from './session/SpawnForIssue';
import { IssueCost } from './session/Cost';
import { ForgeOwnerNeeded } from './ForgeOwnerNeeded';
import { Evidence, putEvidence } from './ThreadEvidence';
import '../thread.css';
import { mayUse, mayWriteTo } from '../host/hub';

export function ThreadView({ id }: { id: string }) {
  // Read again only on a change that may have moved this thread (the stream names the ids that moved); a
  // change that moved only this thread leaves the board to catch up when the page goes.
  const moved = streamRevision('issues', id);
  useEffect(() => narrowBoard((kind, other) => kind === 'issues' && other === id), [id]);
  const [local, setLocal] = useState<Issue | null>(null);
  const t = useFetch(() => get<Issue>(`api/issues/${enc(id)}`).then((i) => (setLocal(null), i)), [id, moved]);
  // The timeline is its own read (the Issue is the spec's table), asked again after each write shown here
  // and when what its events change moved (opened, edited, closed, reopened, promoted: never a reply).
  const [wrote, setWrote] = useState(0);
  const shown = t.data?.id === id ? t.data : undefined;
  const timelineKey = shown ? JSON.stringify([shown.status, shown.store, shown.concern, shown.body, shown.labels, shown.nodes]) : '';
  const changes = useFetch(() => (timelineKey ? get<IssueTimeline>(`api/issues/${enc(id)}/timeline`) : Promise.resolve(undefined)), [id, timelineKey, wrote]);
  // The stores (the promote buttons): read once per page, not per change.
  const list = useFetch(() => issueList(revision.peek()), []);
  const { doing: busy, error: err, run } = useAction();
  const [editing, setEditing] = useState(false);
  useEffect(loadPageAuthor, []);
  const issue = local?.id === id ? local : t.data?.id === id ? t.data : undefined;
  if (!issue) return t.error ? <ErrorBox error={t.error} title={`Issue ${id}`} /> : <p class="muted">Loading issue…</p>;
  const isLocal = issue.store === 'local';
  const events = changes.data?.id === id ? changes.data.events : [];
  // Which reply carried which file is the timeline read's (a Reply is {by, at, body} in every store): until it
  // is here no file is placed, rather than placed under the post and then moved.
  const carried = changes.data?.id === id ? changes.data.carried : undefined;
  const edited = events.filter((e) => e.type === 'edited').at(-1);
  const forges = (list.data?.stores ?? []).filter((s) => s !== 'local');
  /** Runs one write; the stream announces it too, but the answer is shown at once. */
  const act = (what: string, fn: () => Promise<Issue | { issue: Issue }>) =>
    run(async () => {
      const r = await fn();
      setLocal('issue' in r ? r.issue : r);
      setWrote((n) => n + 1);
    }, what);
  return (
    <div class="thread">
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href={href.issues()}>Issues</a> / <code>{issue.id}</code>
      </nav>
      <header class="page-head">
        <h1>{issue.concern}</h1>
        <p class="meta">
          <StatusChip status={issue.status} /> <StoreChip store={issue.store} /> <Labels labels={issue.labels} /> opened by <b>{issue.by}</b> <Ago at={issue.created} />
          {edited ? (
            <span class="muted" data-testid="edited" title={isLocal ? "every version stays in the thread's git history" : 'as the forge records it'}>
              · edited by {edited.by} <Ago at={edited.at} />
            </span>
          ) : null}
          {issue.nodes.map((n) => (
            <a key={n} class="chip node" href={href.node(n)}>
              {n}
            </a>
          ))}
          {issue.url ? (
            <a href={issue.url} target="_blank" rel="noopener noreferrer">
              on the forge ↗
            </a>
          ) : null}
        </p>
      </header>
      <ErrorBox error={err} title={err instanceof ApiError && err.status === 502 ? 'The forge refused' : 'That did not work'} />
      {editing ? (
        <EditForm
          issue={issue}
          onCancel={() => setEditing(false)}
          onSave={(concern, body) =>
            act('edit', async () => {
              const r = await post<Issue>(`api/issues/${enc(issue.id)}/edit`, { concern, body });
              setEditing(false);
              return r;
            })
          }
          busy={busy === 'edit'}
        />
      ) : (
        <article class="post card" data-testid="issue-body">
          <Markdown src={issue.body} />
          <Evidence hashes={carried ? postEvidence(issue, carried) : []} />
        </article>
      )}
      {changes.data?.id === id && changes.data.notes.length ? (
        <p class="muted" data-testid="timeline-notes" title={changes.data.notes.join('\n')}>
          Some of this issue's changes could not be read from {issue.store}, so the list below may miss a close or a reopen.
        </p>
      ) : null}
      <ol class="replies" aria-label="Replies and changes">
        {timeline(issue, events).map((item) =>
          'event' in item ? (
            <EventItem key={`e${item.at}${item.event.type}`} e={item.event} />
          ) : (
            <ReplyItem key={item.n} n={item.n} r={item.reply} hashes={carried?.[String(item.n)] ?? []} canAct={isLocal && !busy} onAct={(action) => act(`${action} ${item.n}`, () => post(`api/issues/${enc(issue.id)}/replies/${item.n}/${action}`, {}))} busy={busy} />
          ),
        )}
      </ol>
      <div class="actions">
        {issue.status === 'open' && mayWriteTo('POST /api/issues/:id/close', issue.store) ? (
          <ConfirmButton
            label="Close issue"
            question={<>Close “{issue.concern}”? {isLocal && !issue.url ? 'It can be reopened.' : ''}</>}
            yes="Yes, close it"
            disabled={!!busy}
            busy={busy === 'close'}
            busyLabel="Closing…"
            onYes={() => void act('close', () => post(`api/issues/${enc(issue.id)}/close`, {}))}
          />
        ) : null}
        {isLocal && !issue.url && !editing ? (
          <button class="button" disabled={!!busy} onClick={() => setEditing(true)}>
            Edit
          </button>
        ) : null}
        {isLocal && !issue.url && issue.status === 'landed' ? (
          <button class="button" disabled={!!busy} onClick={() => act('reopen', () => post(`api/issues/${enc(issue.id)}/reopen`, {}))}>
            {busy === 'reopen' ? 'Reopening…' : 'Reopen'}
          </button>
        ) : null}
        {isLocal && issue.status === 'open' && forges.length && mayUse('POST /api/issues/:id/promote')
          ? forges.map((f) => (
              <button key={f} class="button" disabled={!!busy} onClick={() => act('promote', () => post(`api/issues/${enc(issue.id)}/promote`, { store: f }))}>
                {busy === 'promote' ? 'Promoting…' : `Promote to ${f}`}
              </button>
            ))
          : null}
      </div>
      <IssueCost issue={issue.id} />
      <SpawnForIssue issue={issue} />
      {mayWriteTo('POST /api/issues/:id/reply', issue.store) ? (
        <ReplyForm id={issue.id} onDone={(i) => (setLocal(i), setWrote((n) => n + 1))} />
      ) : (
        <ForgeOwnerNeeded store={issue.store} />
      )}
    </div>
  );
}

/** Edit the concern and body in place; the thread keeps every version (an `edited` event on its ref). */
function EditForm({ issue, onSave, onCancel, busy }: { issue: Issue; onSave: (concern: string, body: string) => void; onCancel: () => void; busy: boolean }) {
  const [concern, setConcern] = useState(issue.concern);
  const [body, setBody] = useState(issue.body);
  return (
    <form
      class="card edit-form"
      aria-label="Edit the issue"
      onSubmit={(e) => {
        e.preventDefault();
        onSave(concern, body);
      }}
    >
      <label>
        <span>Concern</span>
        <input value={concern} required onInput={(e) => setConcern((e.currentTarget as HTMLInputElement).value)} />
      </label>
      <label>
        <span>Body (Markdown)</span>
        <textarea rows={8} value={body} onInput={(e) => setBody((e.currentTarget as HTMLTextAreaElement).value)} />
      </label>
      <div class="actions">
        <button class="button primary" type="submit" disabled={busy || !concern.trim()}>
          {busy ? 'Saving…' : 'Save'}
        </button>
        <button class="button" type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function ReplyItem({ n, r, hashes, canAct, onAct, busy }: { n: number; r: Reply; hashes: readonly string[]; canAct: boolean; onAct: (a: 'resolve' | 'unresolve' | 'retract') => void; busy: string }) {
  const remark = r.resolved !== undefined;
  return (
    <li class={`reply card ${r.retracted ? 'retracted' : ''} ${remark ? 'remark' : ''}`} data-reply={n} aria-label={`Reply ${n}${r.retracted ? ' (retracted)' : ''}`}>
      <p class="meta">
        <span class="num">#{n}</span> <b>{r.by}</b> <Ago at={r.at} />
        {remark ? (
          <span class={`chip ${r.resolved ? 'resolved' : 'unresolved'}`} data-testid={`remark-state-${n}`} title="A remark: a point raised against one reading of the spec; resolve it once it is answered">
            remark · {r.resolved ? 'resolved' : 'unresolved'}
            {r.reading ? ` · reading ${r.reading}` : ''}
          </span>
        ) : null}
        {r.retracted ? <span class="chip">retracted</span> : null}
      </p>
      <Markdown src={r.body} />
      <Evidence hashes={hashes} />
      {canAct && !r.retracted ? (
        <div class="reply-actions">
          {remark ? (
            <button class="button small" onClick={() => onAct(r.resolved ? 'unresolve' : 'resolve')} disabled={!!busy}>
              {r.resolved ? 'Unresolve' : 'Resolve'}
            </button>
          ) : null}
          {r.by === pageAuthor.value ? (
            <ConfirmButton class="button small quiet" label="Retract" question={`Retract reply #${n}? It stays in the thread, greyed.`} yes="Yes, retract" disabled={!!busy} onYes={() => onAct('retract')} />
          ) : null}
        </div>
      ) : null}
    </li>
  );
}

/** A change of the issue itself, between the replies: who did it and when. */
const EVENT_WORDS: Record<IssueEvent['type'], string> = { opened: 'opened this issue', edited: 'edited the concern or text', closed: 'closed this issue', reopened: 'reopened this issue', promoted: 'moved this issue to the forge' };

function EventItem({ e }: { e: IssueEvent }) {
  return (
    <li class={`thread-event event-${e.type}`} data-event={e.type}>
      <span class="event-mark" aria-hidden="true" />
      <b>{e.by}</b> {EVENT_WORDS[e.type]}
      {e.session ? (
        <span>
          {' '}
          with session <a href={href.session(e.session)}>{e.session}</a>, whose change is merged
        </span>
      ) : null}{' '}
      <Ago at={e.at} />
    </li>
  );
}

type TimelineItem = { readonly at: string; readonly n: number; readonly reply: Reply } | { readonly at: string; readonly event: IssueEvent };

/** Replies (numbered as stored) and the issue's own changes, in time order; a reply before a change of the same instant. */
function timeline(issue: Issue, changes: readonly IssueEvent[]): TimelineItem[] {
  const replies: TimelineItem[] = issue.replies.map((reply, i) => ({ at: reply.at, n: i + 1, reply }));
  const events: TimelineItem[] = changes.map((event) => ({ at: event.at, event }));
  const out: TimelineItem[] = [];
  let i = 0;
  for (const e of events) {
    while (i < replies.length && replies[i]!.at <= e.at) out.push(replies[i++]!);
    out.push(e);
  }
  return out.concat(replies.slice(i));
}

/** The evidence no reply carried (a forge issue's, whose comments do not say): shown under the opening post. */
function postEvidence(issue: Issue, carried: Readonly<Record<string, readonly string[]>>): readonly string[] {
  const byReplies = Object.values(carried).flat();
  return issue.evidence.filter((h) => !byReplies.includes(h));
}

function ReplyForm({ id, onDone }: { id: string; onDone: (i: Issue) => void }) {
  const [body, setBody] = useState('');
  const [files, setFiles] = useState<File[]>([]);
  const picker = useRef<HTMLInputElement>(null);
  const { busy, error: err, setError: setErr, run } = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!body.trim()) return setErr({ message: 'Write something first.' });
    await run(async () => {
      // Files are stored only once the reply can be accepted: a refused reply leaves none behind.
      if (files.length) await post(`api/issues/${enc(id)}/reply/check`, { body });
      const evidence: string[] = [];
      for (const f of files) evidence.push((await putEvidence(f)).hash);
      const r = await post<{ issue: Issue }>(`api/issues/${enc(id)}/reply`, evidence.length ? { body, evidence } : { body });
      setBody('');
      setFiles([]);
      // The file input keeps its files until told: cleared, the next reply does not attach them again.
      if (picker.current) picker.current.value = '';
      onDone(r.issue);
    });
  };
  // A text too long for one reply is kept whole as evidence on the reply that says so (one click).
  const attachText = () =>
    run(async () => {
      const said = `The full text (${size(new Blob([body]).size)}) is attached as a file.`;
      await post(`api/issues/${enc(id)}/reply/check`, { body: said });
      const evidence = [(await putEvidence(new File([body], 'reply.txt', { type: 'text/plain' }))).hash];
      for (const f of files) evidence.push((await putEvidence(f)).hash);
      const r = await post<{ issue: Issue }>(`api/issues/${enc(id)}/reply`, { body: said, evidence });
      setBody('');
      setFiles([]);
      onDone(r.issue);
    });
  return (
    <form class="card reply-form" onSubmit={submit}>
      <label>
        <span>Reply (Markdown)</span>
        <textarea value={body} rows={4} onInput={(e) => setBody((e.currentTarget as HTMLTextAreaElement).value)} />
      </label>
      <label>
        <span>Attach evidence (optional)</span>
        <input ref={picker} type="file" multiple onChange={(e) => setFiles(Array.from((e.currentTarget as HTMLInputElement).files ?? []))} />
      </label>
      <ErrorBox error={err} action="reply" title="The reply was not sent">
        {wordsFor(err, 'reply').attach && body ? (
          <button class="button small" type="button" disabled={busy} onClick={() => void attachText()}>
            Attach it as a file ({size(new Blob([body]).size)})
          </button>
        ) : null}
      </ErrorBox>
      <button class="button primary" type="submit" disabled={busy}>
        {busy ? 'Sending…' : 'Reply'}
      </button>
    </form>
  );
}
