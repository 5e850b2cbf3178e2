import { signal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import type { InboxEntry } from '../../projections/inbox.js';
import { Ago, plural } from './ui';

export type { InboxEntry } from '../../projections/inbox.js';

/** An inbox entry with where it lives: the project (on the host page) and the session page's URL. */
export interface InboxItem extends InboxEntry {
  readonly project?: { readonly id: string; readonly name: string };
  readonly href: string;
}

/**
 * The inbox as a list: each session that needs a person, its project, what it waits for, since when,
 * and one link to it (its terminal, or its review for finished work).
 */
export function InboxList({ items, emptyHint }: { items: readonly InboxItem[]; emptyHint: string }) {
  if (!items.length)
    return (
      <div class="card empty" data-testid="inbox-empty">
        <p>
          <b>Nothing needs you.</b> {emptyHint}
        </p>
      </div>
    );
  return (
    <ul class="list inbox" aria-label="Sessions that need you" data-testid="inbox">
      {items.map((e) => (
        <li key={`${e.project?.id ?? ''}/${e.session}`} class={`inbox-item wait-${e.state}`} data-session={e.session} data-nav-row>
          <span class={`wait-mark state-${e.state}`} aria-hidden="true" />
          <div class="inbox-main">
            <a href={e.href} class="title" data-nav>
              {e.title}
            </a>
            <div class="meta">
              {e.project ? <span class="chip project">{e.project.name}</span> : null}
              <span class={`chip state state-${e.state}`} data-testid="waits-for">
                {e.waitsFor}
              </span>
              {e.confinement?.startsWith('unconfined') ? (
                <span class="chip problem" data-testid="unconfined" title={e.confinement}>
                  Not sandboxed
                </span>
              ) : null}
              <span class="muted">
                since <Ago at={e.since} />
              </span>
            </div>
          </div>
          <a class="button small" href={e.href}>
            {e.goTo === 'review' ? 'Review' : 'Open terminal'}
          </a>
        </li>
      ))}
    </ul>
  );
}

/** `(3) Inbox · Trellis`: the count of sessions needing a person leads the tab's title, wherever one is. */
export function titleWithCount(count: number, title: string): string {
  return count ? `(${count}) ${title}` : title;
}

/** Whether the person allowed notifications (kept in a signal so the button re-renders). */
const permission = signal<NotificationPermission | 'unsupported'>(typeof Notification === 'undefined' ? 'unsupported' : Notification.permission);

/** Ask to be notified: a button that appears until the person has answered the browser's question. */
export function NotifyButton() {
  if (permission.value !== 'default') return null;
  return (
    <button
      class="button small"
      type="button"
      onClick={() => void Notification.requestPermission().then((p) => (permission.value = p))}
      title="A browser notification when a session starts needing you, while a Trellis tab is open in this browser"
    >
      Notify me while this tab is open
    </button>
  );
}

/**
 * A browser notification for each entry that was not in the inbox before (a session that just started
 * waiting), when the person allowed it. The first list seen only sets what is known: no burst on load.
 */
export function useInboxNotifications(items: readonly InboxItem[] | null): void {
  useEffect(() => {
    if (!items) return;
    const now = new Set(items.map(keyOf));
    if (known && permission.value === 'granted') {
      for (const e of items) {
        if (known.has(keyOf(e))) continue;
        const n = new Notification(`${e.title}: ${e.waitsFor}`, { body: e.project ? `in ${e.project.name}` : 'needs you', tag: keyOf(e) });
        n.onclick = () => {
          window.focus();
          location.assign(e.href);
        };
      }
    }
    known = now;
  }, [items]);
}

let known: Set<string> | null = null;
const keyOf = (e: InboxItem) => `${e.project?.id ?? ''}/${e.session}/${e.state}/${e.reason ?? ''}`;

/** A heading for the inbox with its count. */
export function inboxHeading(n: number): string {
  return n ? `${plural(n, 'session')} need${n === 1 ? 's' : ''} you` : 'Inbox';
}
