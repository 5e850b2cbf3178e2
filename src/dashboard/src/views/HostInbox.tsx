import { InboxList, inboxHeading, NotifyButton } from '../inbox';
import { hostInbox, projectList } from '../host/projects-store';
import { PushControl } from '../notify-push';
import { NotifySettings } from '../notify-settings';

/**
 * `#/inbox` of the host: every session on this machine that needs a person, whatever its project and
 * agent, live from `/projects/stream` (each project's own change stream moves it).
 */
export function HostInboxView() {
  const items = hostInbox.value;
  if (!items) return <p class="muted">Loading the inbox…</p>;
  const offline = (projectList.value?.projects ?? []).filter((p) => !p.online).length;
  return (
    <div class="inbox-page">
      <header class="page-head row-head">
        <div>
          <h1>{inboxHeading(items.length)}</h1>
          <p class="muted">Every project’s sessions that wait for a person: a permission, a question, their turn; failed, quarantined, or finished and unread.</p>
        </div>
        <div class="row-actions">
          <NotifyButton />
          <PushControl />
        </div>
      </header>
      <InboxList items={items} emptyHint={`Work on. This page updates by itself${offline ? `; ${offline} offline project${offline === 1 ? '' : 's'} cannot report (start them from Projects)` : ''}.`} />
      <NotifySettings projects={projectList.value?.projects ?? []} />
    </div>
  );
}
