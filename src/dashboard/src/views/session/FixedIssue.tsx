import { useState } from 'preact/hooks';
import { enc, get, post } from '../../api';
import { ConfirmButton } from '../../confirm';
import { href } from '../../router';
import { gateRevision, streamRevision } from '../../store';
import type { Issue } from '../../types';
import { ErrorBox, useAction, useFetch } from '../../ui';
import { mayWriteTo } from '../../host/hub';

/**
 * A session spawned for an issue, whose branch is in trunk: the issue does not close by itself (closing is
 * a person's call, as the spec's close transition is), so the page says the issue is still open and offers
 * to close it, asking first. The close names the session, so the issue's timeline says which merged
 * change closed it (a forge's "fixes #n", made visible). Once closed, the page says so, and the bundle is
 * read again (its changed nodes list their open issues, this one no longer among them).
 */
export function FixedIssue({ issue, session }: { issue: string; session: string }) {
  // Read again only when a change may have moved this issue (the stream names the threads that moved).
  const moved = streamRevision('issues', issue);
  const [closed, setClosed] = useState(0);
  const r = useFetch(() => get<Issue>(`api/issues/${enc(issue)}`), [issue, moved, closed]);
  const { busy, error, run } = useAction();
  const i = r.data;
  if (!i) return <ErrorBox error={r.error} title="The session's issue could not be read" />;
  if (i.status !== 'open') {
    return (
      <p class="notice" role="status" data-testid="fixed-issue">
        Its issue <a href={href.issue(i.id)}>{i.concern}</a> is closed.
      </p>
    );
  }
  return (
    <div class="notice" role="status" data-testid="fixed-issue">
      <p>
        This session's change is in trunk, and the issue it was started for, <a href={href.issue(i.id)}>{i.concern}</a>, is still open.
      </p>
      {/* A forge issue's close is the owner's (the machine's forge token): not offered to a login without it. */}
      {mayWriteTo('POST /api/issues/:id/close', i.store) ? (
      <ConfirmButton
        class="button primary"
        label="Close the issue"
        question={`Close “${i.concern}”? Its timeline will say session ${session}'s merged change closed it.`}
        yes="Yes, close the issue"
        busy={busy}
        busyLabel="Closing the issue…"
        disabled={busy}
        onYes={() => void run(() => post(`api/issues/${enc(i.id)}/close`, { session }).then(() => (setClosed((n) => n + 1), gateRevision.value++)))}
      />
      ) : null}
      <ErrorBox error={error} title="The issue was not closed" />
    </div>
  );
}
