import { computed } from '@preact/signals';
import { inboxOf } from '../../../projections/inbox.js';
import { InboxList, inboxHeading, NotifyButton, useInboxNotifications, type InboxItem } from '../inbox';
import { gatewayNotifying } from '../notify-stream';
import { href } from '../router';
import { board, boardError } from '../store';
import { ErrorBox } from '../ui';

/** This project's inbox, from the board's sessions (so it is live through the board's stream). */
export const projectInbox = computed<InboxItem[] | null>(() => {
  const b = board.value;
  return b ? inboxOf(b.sessions).map((e) => ({ ...e, href: href.session(e.session) })) : null;
});

/** `#/inbox` of a project: its sessions that need a person. Every project's together: the host's inbox. */
export function InboxView() {
  const items = projectInbox.value;
  // Under a gateway that tells this page (an admin login), its notifications are the ones shown.
  useInboxNotifications(gatewayNotifying.value ? null : items);
  if (!items) return boardError.value ? <ErrorBox error={boardError.value} title="The inbox could not be loaded" /> : <p class="muted">Loading the inbox…</p>;
  return (
    <div class="inbox-page">
      <header class="page-head row-head">
        <h1>{inboxHeading(items.length)}</h1>
        <NotifyButton />
      </header>
      <InboxList items={items} emptyHint="Sessions appear here when their agent waits for permission, a question or its turn, fails, or finishes work nobody has read." />
    </div>
  );
}
