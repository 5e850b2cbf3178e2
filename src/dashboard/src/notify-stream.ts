import { signal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import type { NotifyEvent } from '../../projections/notify-diff.js';
import { hubBase } from './host/hub';

/** How long after a dropped stream the page listens again. */
const RETRY_MS = 5_000;

/** Whether this page hears the gateway's notifications (a project page then leaves its own inbox diff alone). */
export const gatewayNotifying = signal(false);

/**
 * Desktop notifications while this tab is open, from the gateway's own decisions (`/hub/notify/stream`:
 * one event per wait, after its debounce, none for a muted project or in quiet hours). A withdraw closes
 * the notification it ends; a click opens the session's page. Only when the person allowed it: the page
 * never asks by itself (the "Notify me" button does).
 */
export function useGatewayNotifications(enabled: boolean): void {
  useEffect(() => {
    if (!enabled || typeof Notification === 'undefined' || typeof EventSource === 'undefined') return;
    const open = new Map<string, Notification>();
    let es: EventSource | null = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const connect = () => {
      es = new EventSource(`${hubBase}hub/notify/stream`);
      es.onopen = () => (gatewayNotifying.value = true);
      es.addEventListener('notify', (m) => {
        let e: NotifyEvent;
        try {
          e = JSON.parse((m as MessageEvent<string>).data) as NotifyEvent;
        } catch {
          return;
        }
        if (e.type === 'withdraw') {
          open.get(e.id)?.close();
          open.delete(e.id);
          return;
        }
        if (Notification.permission !== 'granted') return;
        const n = new Notification(`${e.session.title}: ${e.type === 'turn-end' ? 'its turn ended' : e.waitsFor}`, { body: `${e.project.name} · an agent needs you`, tag: e.id });
        open.set(e.id, n);
        n.onclick = () => {
          window.focus();
          n.close();
          location.assign(e.path);
        };
      });
      es.onerror = () => {
        es?.close();
        gatewayNotifying.value = false;
        // A login without admin scope (a project's gate password) may not listen: stop asking.
        void fetch(`${hubBase}auth/status`)
          .then((r) => (r.ok ? (r.json() as Promise<{ admin?: boolean }>) : { admin: false }))
          .then((s) => {
            if (s.admin) timer = setTimeout(connect, RETRY_MS);
          })
          .catch(() => (timer = setTimeout(connect, RETRY_MS)));
      };
    };
    connect();
    return () => {
      clearTimeout(timer);
      es?.close();
    };
  }, [enabled]);
}
