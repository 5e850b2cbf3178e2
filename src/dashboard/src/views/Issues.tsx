import { useMemo, useState } from 'preact/hooks';
import { get } from '../api';
import { href, replace, route } from '../router';
import { revision } from '../store';
import type { IssueList } from '../types';
import { Ago, ErrorBox, Labels, onListKeys, plural, StatusChip, statusWords, StoreChip, useFetch } from '../ui';

let cache: { rev: number; data: Promise<IssueList> } | null = null;
/** The merged list, fetched once per announced change and shared by the list and the node picker. */
export function issueList(rev: number): Promise<IssueList> {
  if (!cache || cache.rev !== rev) {
    const data = get<IssueList>('api/issues');
    cache = { rev, data };
    data.catch(() => cache?.data === data && (cache = null));
  }
  return cache.data;
}

const PAGE = 200;

export function IssuesView() {
  const rev = revision.value;
  const { data, error } = useFetch(() => issueList(rev), [rev]);
  const q = route.value.query;
  const filters = { store: q.get('store') ?? '', status: q.get('status') ?? '', node: q.get('node') ?? '', q: q.get('q') ?? '' };
  const [shown, setShown] = useState(PAGE);
  const set = (k: keyof typeof filters, v: string) => {
    setShown(PAGE);
    replace(href.issues({ ...filters, [k]: v }));
  };
  // Statuses in words: a local `landed` and a forge's `closed` are one choice, "closed" (`status=landed` still filters).
  const statuses = useMemo(() => [...new Set((data?.issues ?? []).map((i) => statusWords(i.status)))].sort(), [data]);
  const stores = useMemo(() => [...new Set([...(data?.stores ?? []), ...(data?.issues ?? []).map((i) => i.store)])].sort(), [data]);
  const matches = useMemo(() => {
    const words = filters.q.toLowerCase().split(/\s+/).filter(Boolean);
    return (data?.issues ?? []).filter(
      (i) =>
        (!filters.store || i.store === filters.store) &&
        (!filters.status || statusWords(i.status) === statusWords(filters.status)) &&
        (!filters.node || i.nodes.includes(filters.node)) &&
        (!words.length || words.every((w) => `${i.concern}\n${i.body}\n${i.id}\n${i.by}`.toLowerCase().includes(w))),
    );
  }, [data, filters.store, filters.status, filters.node, filters.q]);
  return (
    <div class="issues">
      <div class="page-head row-head">
        <h1>Issues</h1>
        <a class="button primary" href={href.newIssue(filters.node || undefined)}>
          Open an issue
        </a>
      </div>
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          <span>Search</span>
          <input type="search" value={filters.q} placeholder="concern, text, id, author…" onInput={(e) => set('q', (e.currentTarget as HTMLInputElement).value)} />
        </label>
        <FilterSelect label="Status" value={filters.status && statusWords(filters.status)} options={statuses} onChange={(v) => set('status', v)} />
        <FilterSelect label="Store" value={filters.store} options={stores} onChange={(v) => set('store', v)} />
        <label>
          <span>Node</span>
          <input value={filters.node} placeholder="node id" onChange={(e) => set('node', (e.currentTarget as HTMLInputElement).value.trim())} />
        </label>
      </form>
      <ErrorBox error={error} title="The issue list could not be loaded" />
      {(data?.notes ?? []).map((n, i) => (
        <ErrorBox key={`note-${i}`} error={{ message: n }} title="A forge in trellis.json is not used" />
      ))}
      {(data?.problems ?? []).map((p, i) => (
        <ErrorBox key={i} error={{ message: p.message ?? JSON.stringify(p) }} title={`A store could not be read${p.store ? `: ${p.store}` : ''}`} />
      ))}
      {data ? (
        <>
          <p class="muted" role="status">
            {matches.length} of {plural(data.issues.length, 'issue')}
          </p>
          <ul class="list issue-list" onKeyDown={onListKeys} aria-label="Issues">
            {matches.slice(0, shown).map((i) => (
              <li key={i.id} data-issue={i.id}>
                <a href={href.issue(i.id)} data-nav class="issue-link">
                  <span class="title">{i.concern}</span>
                </a>
                <span class="meta">
                  <StatusChip status={i.status} /> <StoreChip store={i.store} /> <Labels labels={i.labels} />
                  <span class="muted">
                    {i.by} · <Ago at={i.created} /> · {i.replies.length} repl{i.replies.length === 1 ? 'y' : 'ies'}
                  </span>
                  {i.nodes.map((n) => (
                    <a key={n} class="chip node" href={href.node(n)}>
                      {n}
                    </a>
                  ))}
                </span>
              </li>
            ))}
          </ul>
          {matches.length > shown ? (
            <button class="button" onClick={() => setShown(shown + PAGE)}>
              Show {Math.min(PAGE, matches.length - shown)} more
            </button>
          ) : null}
        </>
      ) : error ? null : (
        <p class="muted">Loading issues…</p>
      )}
    </div>
  );
}

/** A labelled filter whose first choice, "any", clears it. */
function FilterSelect(props: { label: string; value: string; options: readonly string[]; onChange: (value: string) => void }) {
  return (
    <label>
      <span>{props.label}</span>
      <select value={props.value} onChange={(e) => props.onChange((e.currentTarget as HTMLSelectElement).value)}>
        <option value="">any</option>
        {props.options.map((s) => (
          <option key={s} value={s}>
            {s}
          </option>
        ))}
      </select>
    </label>
  );
}
