import { useEffect, useRef } from 'preact/hooks';
import { enc, get } from '../api';
import { href, route } from '../router';
import { board, nodesById, specRevision } from '../store';
import type { EditDelta, HistoryEntry, VersionDiff } from '../types';
import { Ago, Diff, ErrorBox, Markdown, onListKeys, Section, StatusChip, StoreChip, useFetch } from '../ui';
import { WorktreeOrigin, worktreeOnlyNodes } from './worktree-nodes';

/** A node id as a path for `/api/specs/<id>/...`: segments encoded, slashes kept. */
const nodePath = (id: string) => id.split('/').map(enc).join('/');

export function NodeView({ id }: { id: string }) {
  const v = route.value.query.get('v');
  const n = nodesById.value.get(id);
  const rev = specRevision.value;
  const content = useFetch(() => get<{ body: string; parts: { title: string; body: string }[] }>(`api/specs/${nodePath(id)}/content`), [id, rev]);
  if (!n) {
    if (!board.value) return <p class="muted">Loading…</p>;
    if (worktreeOnlyNodes(board.value).some((w) => w.id === id)) return <WorktreeOnlyNodeView id={id} />;
    return <ErrorBox error={{ code: 'NODE_NOT_FOUND', message: `This project's spec tree has no node "${id}".` }} title="No such spec node" />;
  }
  // The text before the first part, without a leading `# Title` that repeats the page's heading.
  const intro = content.data ? (content.data.body.split(/^## /m)[0] ?? '').replace(/^\s*# (.*)\n/, (m, t: string) => (t.trim() === n?.title ? '' : m)) : '';
  return (
    <div class="node-page">
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href={href.board()}>Board</a>
        {ancestors(id).map((a) => (
          <span key={a}>
            {' / '}
            <a href={href.node(a)}>{nodesById.value.get(a)?.title ?? a}</a>
          </span>
        ))}
      </nav>
      <header class="page-head">
        <h1>{n.title}</h1>
        <p class="meta">
          <code>{n.id}</code> · <code>{n.path}</code>
          {n.status ? <span class="chip spec-status">{n.status}</span> : null}
          {n.depends.length ? (
            <span>
              {' '}
              · depends on{' '}
              {n.depends.map((d, i) => (
                <span key={d}>
                  {i ? ', ' : ''}
                  <a href={href.node(d)}>{d}</a>
                </span>
              ))}
            </span>
          ) : null}
        </p>
        {n.problem ? <ErrorBox error={{ message: n.problem }} title="This node's front matter has a problem" /> : null}
      </header>
      <div class="columns">
        <div class="main-col">
          {v ? <VersionView id={id} hash={v} /> : null}
          <Section title={v ? 'Spec today' : 'Spec'} id="spec-h">
            <ErrorBox error={content.error} title="The node's text could not be read" />
            {content.data ? (
              <article class="spec-body" data-testid="node-body">
                {intro.trim() ? <Markdown src={intro} /> : null}
                {content.data.parts.map((p) => (
                  <section class="part" key={p.title}>
                    <h3>{p.title}</h3>
                    <Markdown src={p.body} />
                  </section>
                ))}
              </article>
            ) : content.loading ? (
              <p class="muted">Loading…</p>
            ) : null}
          </Section>
          <EditDeltas id={id} />
        </div>
        <aside class="side-col">
          <Section title={`Issues (${n.openIssues.length} open)`} id="issues-h">
            {n.issues.length ? (
              <ul class="list compact" onKeyDown={onListKeys}>
                {n.issues.map((i) => (
                  <li key={i.id}>
                    <a href={href.issue(i.id)} data-nav>
                      <StatusChip status={i.status} /> {i.concern}
                    </a>{' '}
                    {i.store !== 'local' ? <StoreChip store={i.store} /> : null}
                  </li>
                ))}
              </ul>
            ) : (
              <p class="muted">No issues name this node.</p>
            )}
            <a class="button" href={href.newIssue(id)}>
              Open an issue on this node
            </a>
          </Section>
          <History id={id} selected={v} />
        </aside>
      </div>
    </div>
  );
}

function ancestors(id: string): string[] {
  const out: string[] = [];
  let p = nodesById.value.get(id)?.parent ?? null;
  while (p && out.length < 64 && !out.includes(p)) {
    out.unshift(p);
    p = nodesById.value.get(p)?.parent ?? null;
  }
  return out;
}

function History({ id, selected }: { id: string; selected: string | null }) {
  const rev = specRevision.value;
  const h = useFetch(() => get<HistoryEntry[]>(`api/specs/${nodePath(id)}/history`), [id, rev]);
  return (
    <Section title="History" id="history-h">
      <ErrorBox error={h.error} title="History is unavailable" />
      {h.data && !h.data.length ? <p class="muted">Not committed yet.</p> : null}
      <ol class="timeline" onKeyDown={onListKeys}>
        {(h.data ?? []).map((e) => (
          <li key={e.hash} class={selected === e.hash ? 'selected' : ''}>
            <a href={href.node(id, e.hash)} data-nav aria-current={selected === e.hash ? 'true' : undefined}>
              <span class="subject">{e.subject}</span>
              <span class="muted">
                {e.author} · <Ago at={e.date} /> · {e.change} · <code>{e.hash.slice(0, 8)}</code>
              </span>
            </a>
          </li>
        ))}
      </ol>
    </Section>
  );
}

/**
 * One version of the node, at the top of the page and scrolled to: the text as it read then, and what
 * that version changed. The current text follows below it, titled as today's.
 */
function VersionView({ id, hash }: { id: string; hash: string }) {
  const d = useFetch(() => get<VersionDiff>(`api/specs/${nodePath(id)}/diff/${enc(hash)}`), [id, hash]);
  const h = useFetch(() => get<HistoryEntry[]>(`api/specs/${nodePath(id)}/history`), [id]);
  const at = useRef<HTMLElement>(null);
  useEffect(() => {
    const el = at.current;
    if (!el) return;
    // Scrolled to just below the sticky header, which covers the viewport's top (about 140 px on a phone,
    // where it wraps): scrollIntoView alone would hide the heading and "Back to today" under it.
    const cover = document.querySelector('header.top')?.getBoundingClientRect().bottom ?? 0;
    window.scrollTo({ top: Math.max(0, el.getBoundingClientRect().top + window.scrollY - cover - 8) });
    el.focus({ preventScroll: true });
  }, [hash]);
  const entry = h.data?.find((e) => e.hash.startsWith(hash));
  return (
    <section class="card version" aria-labelledby="version-h" ref={at} tabIndex={-1} data-testid="version">
      <div class="row-head">
        <h2 id="version-h">Version {hash.slice(0, 8)}</h2>
        <a class="button small" href={href.node(id)}>
          Back to today
        </a>
      </div>
      {entry ? (
        <p class="meta">
          <b>{entry.subject}</b> · {entry.author} · <Ago at={entry.date} /> · {entry.change}
        </p>
      ) : null}
      <ErrorBox error={d.error} title="That version could not be read" />
      {d.data ? (
        <>
          {d.data.text !== null ? (
            <article class="spec-body old-text" data-testid="version-text" aria-label={`The node as of version ${hash.slice(0, 8)}`}>
              <Markdown src={d.data.text.replace(/^---\n[\s\S]*?\n---\n/, '')} />
            </article>
          ) : (
            <p class="muted">This version deleted the file.</p>
          )}
          <h3>
            What this version changed <span class="add">+{d.data.additions}</span> <span class="del">−{d.data.deletions}</span>
          </h3>
          <Diff text={d.data.diff} label={`Diff of version ${hash}`} />
        </>
      ) : d.loading ? (
        <p class="muted">Loading the version…</p>
      ) : null}
    </section>
  );
}

/** The node's uncommitted-to-trunk changes, one per worktree the overlay says touches it. */
/**
 * A node that exists only in a worktree: not on the tree yet, so no issues or history here; the page says
 * where it comes from (the session, when one owns the worktree) and shows its text as that worktree adds it.
 */
function WorktreeOnlyNodeView({ id }: { id: string }) {
  const found = worktreeOnlyNodes(board.value).filter((w) => w.id === id);
  const first = found[0]!;
  return (
    <div class="node-page" data-testid="worktree-only-node">
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href={href.board()}>Board</a>
      </nav>
      <header class="page-head">
        <h1>{first.title}</h1>
        <p class="meta">
          <code>{id}</code> · <code>{first.path}</code>
        </p>
        <p class="notice" role="status">
          This node is not on trunk yet: it was{' '}
          {found.map((w, i) => (
            <span key={w.worktree}>
              {i ? ', ' : ''}
              <WorktreeOrigin n={w} words="added in" />
            </span>
          ))}
          . It joins the board’s tree when that work is merged.
        </p>
      </header>
      <EditDeltas id={id} />
    </div>
  );
}

function EditDeltas({ id }: { id: string }) {
  const trees = (board.value?.overlay ?? []).filter((o) => o.nodes.includes(id));
  if (!trees.length) return null;
  return (
    <Section title="In-flight edits" id="edits-h">
      {trees.map((o) => (
        <EditDeltaView key={o.worktree} id={id} worktree={o.worktree} label={o.branch ?? o.worktree} />
      ))}
    </Section>
  );
}

function EditDeltaView({ id, worktree, label }: { id: string; worktree: string; label: string }) {
  const rev = board.value?.overlay;
  const d = useFetch(() => get<EditDelta>(`api/edit?node=${enc(id)}&worktree=${enc(worktree)}`), [id, worktree, rev]);
  return (
    <div class="delta">
      <h3>
        ✎ {label}{' '}
        {d.data ? (
          <span class="muted">
            ({d.data.state}, <span class="add">+{d.data.additions}</span> <span class="del">−{d.data.deletions}</span>)
          </span>
        ) : null}
      </h3>
      <ErrorBox error={d.error} title="The edit could not be read" />
      {d.data ? <Diff text={d.data.diff} label={`Edit in ${label}`} /> : d.loading ? <p class="muted">Loading the diff…</p> : null}
    </div>
  );
}
