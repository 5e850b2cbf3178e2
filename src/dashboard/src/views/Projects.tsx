import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { enc } from '../api';
import { ErrorBox, LockIcon, onListKeys, useAction } from '../ui';
import { errorOf, hub } from '../host/hub';
import { hostHref } from '../host/host-route';
import { hostInbox, projectList, type ProjectRow } from '../host/projects-store';
import { InboxList, inboxHeading } from '../inbox';
import { HostsSection } from './Hosts';
import { ServedOnly } from './ServedOnly';
import { hostSpendWords, rowSpendWords } from '../cost-words';

/**
 * The host home: every project on this machine, live from `/projects/stream` (online state, open issues,
 * live sessions). An offline project starts from here; the list turns it online by itself.
 */
export function ProjectsView() {
  const list = projectList.value;
  return (
    <>
      <div class="page-head row-head">
        <div>
          <h1>Projects</h1>
          <p class="muted">Every Trellis project on this machine: registered ones always, others while they are served. Open one to see its board, issues and sessions.</p>
        </div>
        <a class="button primary" href={hostHref.register()}>
          Register a folder
        </a>
      </div>
      <InboxSummary />
      {list ? <HostSpend rows={list.projects} /> : null}
      {list?.catalogError ? <ErrorBox title="The project catalog cannot be read" error={{ code: 'CATALOG_MALFORMED', message: list.catalogError }} /> : null}
      {!list ? (
        <p class="muted">Loading the project list…</p>
      ) : list.projects.length === 0 ? (
        <div class="card">
          <p>No projects yet.</p>
          <p>
            <a href={hostHref.register()}>Register a folder</a>, or run <code>trellis serve</code> in a project.
          </p>
        </div>
      ) : (
        <ul class="list projects" aria-label="Projects" onKeyDown={onListKeys}>
          {list.projects.map((p) => (
            <ProjectItem p={p} key={p.id} />
          ))}
        </ul>
      )}
      <HostsSection />
    </>
  );
}

/** What this machine's projects spent today and this week, summed over the rows (each read from its backend). */
function HostSpend({ rows }: { rows: readonly ProjectRow[] }) {
  const w = hostSpendWords(rows);
  if (!w) return null;
  return (
    <p class="host-spend" data-testid="host-spend" title="Days in UTC, the week from Monday">
      This machine's projects spent <b data-testid="host-spend-today">{w.today}</b> today and <b data-testid="host-spend-week">{w.week}</b> this week
      {w.counted > 1 ? ` (${w.counted} projects)` : ''}.{w.uncounted ? <span class="muted"> {w.uncounted}</span> : null}
    </p>
  );
}

/** A project's spend in its row; flagged once its daily budget is reached (its new agent sessions are stopped). */
function RowSpend({ spend }: { spend: NonNullable<ProjectRow['spend']> }) {
  const w = rowSpendWords(spend);
  return (
    <span class={w.over ? 'chip spend problem' : 'chip spend'} data-testid="project-spend" title={w.over ? "Today's budget is used up: its agent sessions are stopped at their next reply" : "What its agent sessions' models cost (days in UTC, the week from Monday)"}>
      {w.text}
    </span>
  );
}

/** The host inbox at the top of the projects, when anything needs a person. */
function InboxSummary() {
  const items = hostInbox.value;
  if (!items?.length) return null;
  return (
    <section class="inbox-summary" aria-labelledby="inbox-summary-h">
      <h2 id="inbox-summary-h">
        <a href={hostHref.inbox()}>{inboxHeading(items.length)}</a>
      </h2>
      <InboxList items={items.slice(0, 5)} emptyHint="" />
    </section>
  );
}

function ProjectItem({ p }: { p: ProjectRow }) {
  return (
    <li class="project-row" data-testid={`project-${p.id}`} data-online={String(p.online)}>
      <ProjectIcon p={p} />
      <div class="project-main">
        <a data-nav class="project-name" href={p.online || p.host ? p.url : hostHref.project(p.id)}>
          {p.name}
        </a>
        <div class="muted project-root" title={p.root}>
          {p.root}
        </div>
        {!p.cataloged && !p.host ? <ServedOnly p={p} /> : null}
      </div>
      <div class="project-facts">
        {p.host ? (
          <span class="chip host" data-testid="host" title={`on ${p.host}, reached over SSH`}>
            on {p.host}
          </span>
        ) : null}
        <OnlineChip p={p} />
        {p.online ? (
          <>
            <span class="chip" data-testid="open-issues">
              {p.openIssues ?? 0} open {p.openIssues === 1 ? 'issue' : 'issues'}
            </span>
            <span class="chip" data-testid="live-sessions">
              {p.liveSessions ?? 0} live {p.liveSessions === 1 ? 'session' : 'sessions'}
            </span>
            {p.spend ? <RowSpend spend={p.spend} /> : null}
          </>
        ) : null}
        {p.gated ? <span class="chip gate" title={`gate: ${p.gate}`}>
            <LockIcon /> {p.gate}
          </span> : null}
      </div>
      <div class="project-actions">
        {p.online ? (
          <a class="button" href={p.url}>
            Open
          </a>
        ) : (
          <StartButton p={p} />
        )}
        {/* Another host's project is managed on that host; here it is opened or started. */}
        {p.host ? null : (
          <a class="button quiet" href={hostHref.project(p.id)} aria-label={`Manage ${p.name}`}>
            Manage
          </a>
        )}
        {p.cataloged && !p.host ? <RemoveButton p={p} /> : null}
      </div>
    </li>
  );
}

export function ProjectIcon({ p }: { p: ProjectRow }) {
  const icon = p.icon && [...p.icon].length <= 4 ? p.icon : (p.name[0] ?? '?').toUpperCase();
  return (
    <span class="project-icon" aria-hidden="true">
      {icon}
    </span>
  );
}

export function OnlineChip({ p }: { p: ProjectRow }) {
  return (
    <span class={`chip ${p.online ? 'online' : 'offline'}`} data-testid="online-state" title={p.online ? 'its backend is running' : `offline: ${p.reason ?? 'no backend running'}`}>
      {p.online ? 'online' : 'offline'}
    </span>
  );
}

/**
 * Starts the project's backend (a detached `trellis serve` that outlives the gateway). The row turns
 * online from the stream, not from this answer, so every open page sees the same thing.
 */
export function StartButton({ p, onTranscript }: { p: ProjectRow; onTranscript?: (t: string) => void }) {
  const { busy, error, run } = useAction();
  const start = () =>
    run(async () => {
      const a = await hub<{ url?: string; logTail?: string }>('POST', `projects/${enc(p.id)}/serve`, {});
      if (a.status !== 200) {
        const err = errorOf(a, 'starting the backend');
        if (a.body.logTail) onTranscript?.(a.body.logTail);
        // The log's tail travels in the error's details: the box shows it under the page's words.
        throw err;
      }
      onTranscript?.(`started: ${a.body.url ?? ''}\n`);
    });
  return (
    <>
      <button class="button primary" type="button" onClick={start} disabled={busy} aria-label={`Start ${p.name}`}>
        {busy ? 'Starting…' : 'Start'}
      </button>
      {error ? <ErrorBox error={error} title={`${p.name} did not start`} /> : null}
    </>
  );
}

/**
 * Takes a project off the host's list (`DELETE /projects/:id`: the catalog entry only; the folder, its
 * repository and a running backend are left alone). Destructive, so it asks first, in the page: the button
 * turns into Yes / Cancel with the focus on Cancel, and Cancel (or Escape) gives the focus back. The row
 * leaves the list from the stream, like every other change.
 */
export function RemoveButton({ p }: { p: ProjectRow }) {
  const [asking, setAsking] = useState(false);
  const { busy, error, run } = useAction();
  const cancel = useRef<HTMLButtonElement>(null);
  const opener = useRef<HTMLButtonElement>(null);
  const wasAsking = useRef(false);
  // Before the next paint, so a key pressed right after the swap lands on the new button.
  useLayoutEffect(() => {
    if (asking) cancel.current?.focus();
    else if (wasAsking.current) opener.current?.focus();
    wasAsking.current = asking;
  }, [asking]);
  const remove = async () => {
    const ok = await run(async () => {
      const a = await hub('DELETE', `projects/${enc(p.id)}`);
      if (a.status !== 204) throw errorOf(a, 'removing the project');
    });
    if (!ok) setAsking(false);
  };
  return (
    <>
      {asking ? (
        <span class="remove-confirm" role="group" aria-label={`Confirm: remove ${p.name}`} onKeyDown={(e) => e.key === 'Escape' && setAsking(false)}>
          <span>Remove {p.name} from this list? Its folder and repository stay as they are.</span>
          <button class="button danger" type="button" onClick={remove} disabled={busy}>
            {busy ? 'Removing…' : 'Yes, remove'}
          </button>
          <button ref={cancel} class="button" type="button" onClick={() => setAsking(false)} disabled={busy}>
            Cancel
          </button>
        </span>
      ) : (
        <button ref={opener} class="button quiet" type="button" onClick={() => setAsking(true)} aria-label={`Remove ${p.name}`}>
          Remove
        </button>
      )}
      {error ? <ErrorBox error={error} title={`${p.name} was not removed`} /> : null}
    </>
  );
}
