import { useState } from 'preact/hooks';
import { post } from '../api';
import { go, href, route } from '../router';
import { board, revision } from '../store';
import type { Issue } from '../types';
import { ErrorBox, useFetch, useAction } from '../ui';
import { issueList } from './Issues';
import { mayWriteTo } from '../host/hub';
import { nearestNames } from '../../../projections/nearest-names.js';

/** Open an issue: concern, Markdown body, store, and the nodes it concerns (picked from the spec tree). */
export function NewIssueView() {
  const first = route.value.query.get('node');
  const [concern, setConcern] = useState('');
  const [body, setBody] = useState('');
  const [nodes, setNodes] = useState<string[]>(first ? [first] : []);
  const [pick, setPick] = useState('');
  const [store, setStore] = useState('local');
  const { busy, error: err, setError: setErr, run } = useAction();
  const list = useFetch(() => issueList(revision.value), [revision.value]);
  const known = new Set((board.value?.nodes ?? []).map((n) => n.id));
  // One rule for a node on every surface (the CLI and the API refuse it too): an unknown node is refused,
  // with the nearest names, never silently dropped.
  const unknown = (id: string) => {
    const near = nearestNames(id, known);
    return { message: `There is no node "${id}"${near.length ? `; did you mean ${near.map((x) => `"${x}"`).join(', ')}?` : ''} Pick one from the list.` };
  };
  const add = () => {
    const id = pick.trim();
    if (!id) return;
    if (!known.has(id)) return setErr(unknown(id));
    setErr(null);
    if (!nodes.includes(id)) setNodes([...nodes, id]);
    setPick('');
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!concern.trim()) return setErr({ message: 'Say what the concern is.' });
    // A node typed but not added counts as added: what the person typed is what the issue names.
    const typed = pick.trim();
    if (typed && !known.has(typed)) return setErr(unknown(typed));
    const named = typed && !nodes.includes(typed) ? [...nodes, typed] : nodes;
    await run(async () => {
      const issue = await post<Issue>('api/issues', { concern, ...(body ? { body } : {}), ...(named.length ? { nodes: named } : {}), store });
      go(href.issue(issue.id));
    });
  };
  return (
    <form class="new-issue card" onSubmit={submit}>
      <h1>Open an issue</h1>
      <label>
        <span>Concern (one line)</span>
        <input value={concern} required onInput={(e) => setConcern((e.currentTarget as HTMLInputElement).value)} />
      </label>
      <label>
        <span>Details (Markdown, optional)</span>
        <textarea rows={6} value={body} onInput={(e) => setBody((e.currentTarget as HTMLTextAreaElement).value)} />
      </label>
      <fieldset>
        <legend>Spec nodes it concerns</legend>
        <ul class="picked">
          {nodes.map((n) => (
            <li key={n} class="chip node">
              {n}{' '}
              <button type="button" class="x" aria-label={`Remove ${n}`} onClick={() => setNodes(nodes.filter((x) => x !== n))}>
                ×
              </button>
            </li>
          ))}
        </ul>
        <div class="inline">
          <label>
            <span>Add a node</span>
            <input list="node-ids" value={pick} placeholder="type to search node ids" onInput={(e) => setPick((e.currentTarget as HTMLInputElement).value)} onKeyDown={(e) => e.key === 'Enter' && (e.preventDefault(), add())} />
          </label>
          <button type="button" class="button" onClick={add}>
            Add
          </button>
        </div>
        <datalist id="node-ids">
          {(board.value?.nodes ?? []).map((n) => (
            <option key={n.id} value={n.id}>
              {n.title}
            </option>
          ))}
        </datalist>
      </fieldset>
      <label>
        <span>Store</span>
        <select value={store} onChange={(e) => setStore((e.currentTarget as HTMLSelectElement).value)}>
          {(list.data?.stores ?? ['local']).filter((s) => mayWriteTo('POST /api/issues', s)).map((s) => (
            <option key={s} value={s}>
              {s === 'local' ? 'local (this repository)' : s}
            </option>
          ))}
        </select>
      </label>
      <ErrorBox error={err} title="The issue was not opened" />
      <button class="button primary" type="submit" disabled={busy}>
        {busy ? 'Opening…' : 'Open issue'}
      </button>
    </form>
  );
}
