import { computed, signal } from '@preact/signals';
import { CostChip, ProjectSpendLine, SpawnSpend } from './session/Cost';
import { useState } from 'preact/hooks';
import { get, post } from '../api';
import { go, href, replace, route } from '../router';
import { board, boardError, refreshBoard, revision } from '../store';
import type { ResourceInventory, SessionSummary, SessionView as Session } from '../types';
import { Ago, ErrorBox, onListKeys, useAction } from '../ui';
import { OverlapFlags, spawnWarnings } from './SessionChecks';
import { HarnessDefaultNote, HarnessPicker } from './session/HarnessPicker';
import { mayRunCommands, ShellNeeded } from './session/ShellNeeded';
import '../sessions.css';

/** The harnesses `trellis session spawn --harness` knows; the server names them again if one is refused. */
export const HARNESSES = ['shell', 'claude', 'codex', 'opencode', 'gemini'] as const;

/** Sessions whose pane did something nobody has looked at yet (the nav's counter). */
export const unreadSessions = computed(() => (board.value?.sessions ?? []).filter((s) => s.unread && s.state !== 'closed').length);

/** What each source means, for the tooltip on a state. */
const SOURCE_HELP: Record<string, string> = {
  user: 'a person (the CLI or this page)',
  hook: 'the agent, through its hooks',
  pane: 'the terminal pane',
  process: 'the agent process',
  supervisor: 'the server’s supervisor',
};

/** A session's state with its sub-reason and who caused it: `awaiting · turn-end · by hook`. */
export function SessionState({ s }: { s: Pick<SessionSummary, 'state' | 'reason' | 'source'> & { detail?: string | null } }) {
  // A reason that only repeats the source (`by-user` of an interrupt, an older quarantine's `by user`) is said once.
  const reason = s.reason && s.source && s.reason.replace(/-/g, ' ') === `by ${s.source}` ? null : s.reason;
  return (
    <span class="session-state" data-testid="session-state">
      <span class={`chip state state-${s.state}`}>{s.state}</span>
      {reason ? (
        <span class="chip reason" title={s.detail ?? undefined}>
          {reason}
        </span>
      ) : s.state === 'queued' ? (
        <QueuedReason />
      ) : null}
      {s.source ? (
        <span class="source" title={`the latest transition came from ${SOURCE_HELP[s.source] ?? s.source}`}>
          by {s.source}
        </span>
      ) : null}
    </span>
  );
}

/** The host's session budget as `/api/resources` last said it, fetched again on each board revision. */
const resources = signal<{ rev: number; data: ResourceInventory | null }>({ rev: -1, data: null });
function useResources(): ResourceInventory | null {
  const rev = revision.value;
  if (resources.value.rev !== rev) {
    resources.value = { rev, data: resources.value.data };
    get<ResourceInventory>('api/resources').then((data) => (resources.value = { rev, data }), () => {});
  }
  return resources.value.data;
}

/** Why a queued session waits: which budget holds it (`2 of 2 running`, or the host's free memory). */
function QueuedReason() {
  const r = useResources();
  if (!r) return null;
  const { running, budget, minFreeMb } = r.sessions;
  const freeMb = Math.floor(r.memory.freeBytes / 2 ** 20);
  const text = running >= budget ? `waiting for a slot: ${running} of ${budget} running` : freeMb < minFreeMb ? `waiting for memory: ${freeMb} MB free, ${minFreeMb} MB needed` : 'next in the queue';
  return (
    <span class="chip reason" data-testid="queued-reason" title="sessions.max and sessions.minFreeMb in trellis.json set the budget">
      {text}
    </span>
  );
}

/** Links to what a session works on: its spec nodes and its issue. */
export function SessionLinks({ s }: { s: Pick<SessionSummary, 'nodes' | 'issue'> }) {
  return (
    <>
      {s.nodes.map((n) => (
        <a key={n} class="chip node" href={href.node(n)}>
          {n}
        </a>
      ))}
      {s.issue ? (
        <a class="chip" href={href.issue(s.issue)}>
          issue {s.issue}
        </a>
      ) : null}
    </>
  );
}

/**
 * `#/sessions`: every session from the board's `sessions` (so it is live through the board's stream: a
 * transition written by any process re-renders it), most recently active first, and the spawn form.
 */
export function SessionsView() {
  const query = route.value.query;
  const showClosed = query.get('closed') === '1';
  const b = board.value;
  const all = b?.sessions ?? [];
  // Running sessions first (what a person comes back to, on a phone above the fold), then the rest; each
  // group most recently active first, as the board gives them.
  const open = all.filter((s) => s.state !== 'closed');
  const list = [...open.filter((s) => LIVE.has(s.state)), ...open.filter((s) => !LIVE.has(s.state)), ...(showClosed ? all.filter((s) => s.state === 'closed') : [])];
  const closed = all.length - open.length;
  // The spawn form is a button away, open by itself when a link filled it in (an issue's "Start a
  // session") or when there is nothing else to show.
  const [spawning, setSpawning] = useState(false);
  const filled = query.has('issue') || query.has('task');
  const formOpen = spawning || filled || (!!b && !open.length);
  return (
    <div class="sessions">
      <header class="page-head row-head">
        <div>
          <h1>Sessions</h1>
          <ProjectSpendLine />
        </div>
        <div class="row-actions">
          {/* Not before the board is read: with no session the form opens by itself, and the button would flash. */}
          {b && mayRunCommands.value && !formOpen ? (
            <button class="button primary" data-testid="spawn-open" onClick={() => setSpawning(true)}>
              Spawn a session
            </button>
          ) : null}
          <label class="check">
            <input type="checkbox" checked={showClosed} onChange={() => replace(showClosed ? '#/sessions' : '#/sessions?closed=1')} /> Show closed ({closed})
          </label>
        </div>
      </header>
      {formOpen && mayRunCommands.value ? <SpawnForm /> : null}
      {!b ? boardError.value ? <ErrorBox error={boardError.value} title="Cannot load the sessions" /> : <p class="muted">Loading sessions…</p> : null}
      {b && !list.length ? <p class="muted" data-testid="no-sessions">No {showClosed ? '' : 'open '}sessions.{mayRunCommands.value ? ' Spawn one above.' : ''}</p> : null}
      {list.length ? (
        <ul class="list session-list" aria-label="Sessions" onKeyDown={onListKeys}>
          {list.map((s) => (
            <li key={s.id} data-session={s.id} class={s.unread ? 'unread' : undefined}>
              <div class="session-row">
                {s.unread ? <span class="unread-dot" title="new output since it was last viewed" aria-label="unread" /> : null}
                <a href={href.session(s.id)} data-nav class="title">
                  {s.title || s.id}
                </a>
                <code class="id">{s.id}</code>
              </div>
              <p class="meta">
                <SessionState s={s} /> <span class="chip harness">{s.harness}</span> <CostChip s={s} /> active <Ago at={s.updatedAt} />
                <SessionLinks s={s} />
                <span class="branch">{s.branch}</span>
                <OverlapFlags overlaps={s.overlaps} compact />
              </p>
            </li>
          ))}
        </ul>
      ) : null}
      {/* A login that may not spawn is told why there is no button, under the sessions it came to see. */}
      {mayRunCommands.value ? null : <ShellNeeded what="Spawning a session" />}
    </div>
  );
}

/** States whose agent is at work or waits on a person now: listed first. */
const LIVE: ReadonlySet<string> = new Set(['running', 'awaiting', 'review', 'merging', 'starting']);

/** Spawn: harness, task, nodes, issue; on success the new session's page opens. */
function SpawnForm() {
  // An issue's "Start a session" link fills the task and the issue in (#/sessions?issue=…&task=…&nodes=…).
  const query = route.value.query;
  const [task, setTask] = useState(query.get('task') ?? '');
  // '' = the project's default harness (trellis.json), as `trellis session spawn` without --harness.
  const [harness, setHarness] = useState<string>('');
  const [nodes, setNodes] = useState(query.get('nodes') ?? '');
  const [issue, setIssue] = useState(query.get('issue') ?? '');
  const { busy, error: err, run } = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    await run(async () => {
      const picked = nodes.split(/[\s,]+/).filter(Boolean);
      const s = await post<Session & { warnings?: string[] }>('api/sessions', { task, ...(harness ? { harness } : {}), ...(picked.length ? { nodes: picked } : {}), ...(issue.trim() ? { issue: issue.trim() } : {}) });
      spawnWarnings.value = s.warnings?.length ? { id: s.id, warnings: s.warnings } : null;
      void refreshBoard();
      go(href.session(s.id));
    });
  };
  return (
    <form class="card spawn" onSubmit={submit} aria-labelledby="spawn-h">
      <h2 id="spawn-h">Spawn a session</h2>
      <SpawnSpend />
      <div class="spawn-fields">
        <HarnessPicker value={harness} onChange={setHarness} fallback={HARNESSES} />
        <label class="grow">
          <span>Task</span>
          <textarea rows={2} required value={task} onInput={(e) => setTask((e.target as HTMLTextAreaElement).value)} placeholder="What the agent should do (the first line is its title)" />
        </label>
        <label>
          <span>Nodes (space separated)</span>
          <input value={nodes} onInput={(e) => setNodes((e.target as HTMLInputElement).value)} placeholder="checkout/payment" list="spawn-node-ids" />
        </label>
        <label>
          <span>Issue</span>
          <input value={issue} onInput={(e) => setIssue((e.target as HTMLInputElement).value)} placeholder="issue id (optional)" />
        </label>
      </div>
      <HarnessDefaultNote />
      <datalist id="spawn-node-ids">
        {(board.value?.nodes ?? []).map((n) => (
          <option key={n.id} value={n.id} />
        ))}
      </datalist>
      <ErrorBox error={err} action="spawn" title="The session was not spawned" />
      <div>
        <button class="button primary" type="submit" disabled={busy || !task.trim()}>
          {busy ? 'Spawning…' : 'Spawn'}
        </button>
      </div>
    </form>
  );
}
