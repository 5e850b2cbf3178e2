import { useEffect, useState } from 'preact/hooks';
import { diffSize, LONG_DIFF_LINES } from '../../../../projections/review-bundle.js';
import { enc, get } from '../../api';
import { href } from '../../router';
import { branchRevision, gateRevision } from '../../store';
import type { ReviewBundle } from '../../types';
import { Ago, Diff, ErrorBox, plural, useFetch } from '../../ui';
import { ChecksPanel } from '../SessionChecks';
import { ReviewCost } from './Cost';
import '../../review.css';

/** git's status letters in words. */
const CHANGE: Record<string, string> = { A: 'added', M: 'modified', D: 'deleted', R: 'renamed', C: 'copied', T: 'type changed' };

/**
 * The review bundle as a diff viewer, laid out for reading across the page's width: the checks first (what
 * the merge gate says), then the merge pre-flight, commits, changed nodes with open issues, and each
 * file's diff in a fold of its own, open unless it is longer than LONG_DIFF_LINES lines.
 * It is fetched again (git runs for it each time) when what the session's read says of it changes
 * (`version`: its state, base, acceptances), when its branch's or trunk's tip moved (the change stream names
 * the branches), and on what can move every review (`gateRevision`: a reading filed, the spec tree, the
 * page's own actions); never on another session's event or an issue write: the pre-flight line, the checks
 * table and the diff are one answer, never two.
 */
export function useReviewBundle(id: string, branch: string, auto: boolean, version: string): { want: boolean; load: () => void; bundle: ReviewBundle | undefined; error: unknown } {
  const [want, setWant] = useState(auto);
  useEffect(() => {
    if (auto) setWant(true);
  }, [auto]);
  // A page that moves to another session starts from that session's own need for its bundle.
  useEffect(() => setWant(auto), [id]);
  // Trunk's name is the bundle's (the project's setting, as the server reads it), known after the first
  // read: its moves count from then (learning its name is no move, and reads nothing again).
  const [trunk, setTrunk] = useState<{ name: string; from: number } | null>(null);
  const moved = `${gateRevision.value} ${branchRevision(branch)} ${trunk ? branchRevision(trunk.name) - trunk.from : 0}`;
  const r = useFetch(() => (want ? get<ReviewBundle>(`api/sessions/${enc(id)}/review`) : Promise.resolve(undefined)), [id, want, version, moved]);
  const trunkName = r.data?.preflight.trunk;
  useEffect(() => {
    if (trunkName && trunkName !== trunk?.name) setTrunk({ name: trunkName, from: branchRevision(trunkName) });
  }, [trunkName]);
  // Another session's bundle, still held while this one's loads, is never shown as this one's.
  return { want, load: () => setWant(true), bundle: r.data?.session === id ? r.data : undefined, error: r.error };
}

/** The bundle as the session page reads it (useReviewBundle): the strip at the top and this card share one read. */
export function Review({ id, rb, onMerged }: { id: string; rb: ReturnType<typeof useReviewBundle>; onMerged?: (merged: boolean) => void }) {
  const { want, load: setWant, bundle: b, error } = rb;
  const r = { error };
  // The session page's actions follow the bundle's fact: a branch already in trunk is not offered a merge.
  const merged = !!b?.preflight.merged;
  useEffect(() => onMerged?.(merged), [merged]);
  return (
    <section class="card review" aria-labelledby="review-h">
      <div class="row-head">
        <h2 id="review-h">Review bundle</h2>
        {!want ? (
          <button class="button small" onClick={() => setWant()}>
            Load the review bundle
          </button>
        ) : null}
      </div>
      {want && !b && !r.error ? <p class="muted">Building the review bundle…</p> : null}
      <ErrorBox error={r.error} title="No review bundle" />
      {b ? (
        <>
          <ReviewCost b={b} />
          <ChecksPanel checks={b.checks} session={id} preflight={b.preflight} merged={b.preflight.merged ? { trunk: b.preflight.trunk, commit: b.preflight.merged.commit } : null} />
          {b.preflight.merged ? (
            <p class="meta" data-testid="preflight" data-head={b.head}>
              In <code>{b.preflight.trunk}</code> since <code>{b.preflight.merged.commit.slice(0, 10)}</code>: <span class="chip resolved">merged</span>
            </p>
          ) : (
            <p class="meta" data-testid="preflight" data-head={b.head}>
              Merge pre-flight into <code>{b.preflight.trunk}</code>:{' '}
              <span class={`chip ${b.preflight.result === 'clean' ? 'resolved' : 'problem'}`}>{b.preflight.result === 'clean' ? 'merges cleanly' : `${plural(b.preflight.conflicts.length, 'conflicting path')}`}</span>
              {b.preflight.trunkMovedAhead ? <span class="chip unresolved">trunk moved ahead of the branch</span> : null}
            </p>
          )}
          {!b.preflight.merged && b.preflight.conflicts.length ? (
            <ul class="conflicts">
              {b.preflight.conflicts.map((c) => (
                <li key={c}>
                  <code>{c}</code>
                </li>
              ))}
            </ul>
          ) : null}
          <p class="meta" title={`Since the merge base with ${b.preflight.trunk}: the branch's own commits and changes (git diff ${b.preflight.trunk}...${b.branch})`}>
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
          {b.files.length ? <h3>Files</h3> : null}
          {b.files.map((file) => (
            <FileDiff key={file.path} path={file.path} status={file.status} diff={file.diff} />
          ))}
        </>
      ) : null}
    </section>
  );
}

/** One file's diff in a fold of its own: open when short, folded when longer than LONG_DIFF_LINES lines. */
function FileDiff({ path, status, diff }: { path: string; status: string; diff: string }) {
  const size = diffSize(diff);
  return (
    <details class="file-diff" open={!size.long} data-file={path}>
      <summary>
        <span class="chip">{CHANGE[status.charAt(0)] ?? status}</span> <code>{path}</code>{' '}
        <span class="muted small">
          <span class="add">+{size.additions}</span> <span class="del">−{size.deletions}</span>
          {size.long ? ` · ${size.lines} lines, folded (more than ${LONG_DIFF_LINES})` : ''}
        </span>
      </summary>
      <Diff text={diff} label={`Diff of ${path}`} />
    </details>
  );
}
