import { signal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { errorOf, hub, hubBase } from './host/hub';
import { ErrorBox } from './ui';

/** Web Push on this device: unsupported here, off, on, or busy asking. */
const pushState = signal<'unsupported' | 'off' | 'on' | 'busy'>('unsupported');
const pushError = signal<unknown>(null);

const supported = (): boolean => typeof navigator !== 'undefined' && 'serviceWorker' in navigator && typeof PushManager !== 'undefined' && isSecureContext;

/**
 * The installable app on the host page: its manifest and its service worker (which shows pushed
 * notifications). Registering asks the person nothing. A device that subscribed before (another login,
 * a restarted gateway: subscriptions last as long as the login) is registered again with this login,
 * silently, since the person already said yes.
 */
export function useInstallableApp(admitted: boolean): void {
  useEffect(() => {
    if (!document.querySelector('link[rel=manifest]')) {
      const link = Object.assign(document.createElement('link'), { rel: 'manifest', href: `${hubBase}manifest.webmanifest` });
      document.head.append(link);
    }
    if (!supported()) return;
    void navigator.serviceWorker.register(`${hubBase}sw.js`, { scope: hubBase }).catch((err: Error) => (pushError.value = err));
  }, []);
  useEffect(() => {
    if (!admitted || !supported()) return;
    pushState.value = 'off';
    void (async () => {
      const reg = await navigator.serviceWorker.ready;
      const sub = await reg.pushManager.getSubscription();
      if (!sub || Notification.permission !== 'granted') return;
      const a = await hub('POST', 'hub/push/subscriptions', sub.toJSON());
      pushState.value = a.status === 201 ? 'on' : 'off';
    })().catch(() => undefined);
  }, [admitted]);
}

const keyBytes = (b64u: string): Uint8Array<ArrayBuffer> => {
  const s = atob(b64u.replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(s, (c) => c.charCodeAt(0));
};

async function subscribe(): Promise<void> {
  if ((await Notification.requestPermission()) !== 'granted') throw new Error('Notifications are blocked for this site: allow them in the browser’s site settings, then try again.');
  const key = await hub<{ publicKey: string }>('GET', 'hub/push/key');
  if (key.status !== 200) throw errorOf(key, 'Reading the hub’s push key');
  const reg = await navigator.serviceWorker.ready;
  const sub = await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(key.body.publicKey) });
  const a = await hub('POST', 'hub/push/subscriptions', sub.toJSON());
  if (a.status !== 201) throw errorOf(a, 'Saving this device');
}

async function unsubscribe(): Promise<void> {
  const sub = await (await navigator.serviceWorker.ready).pushManager.getSubscription();
  if (!sub) return;
  await hub('DELETE', 'hub/push/subscriptions', { endpoint: sub.endpoint });
  await sub.unsubscribe();
}

/** On this device even when no tab is open (Web Push): one button to turn it on, one to turn it off. */
export function PushControl() {
  const s = pushState.value;
  if (s === 'unsupported') return null;
  const run = (fn: () => Promise<void>, after: 'on' | 'off') => {
    pushError.value = null;
    pushState.value = 'busy';
    fn().then(
      () => (pushState.value = after),
      (err: unknown) => ((pushError.value = err), (pushState.value = after === 'on' ? 'off' : 'on')),
    );
  };
  return (
    <span class="push-control">
      {s === 'on' ? (
        <button class="button small" type="button" data-testid="push-off" onClick={() => run(unsubscribe, 'off')}>
          Stop notifying this device
        </button>
      ) : (
        <button class="button small" type="button" data-testid="push-on" disabled={s === 'busy'} onClick={() => run(subscribe, 'on')} title="Notifications on this device even when no Trellis tab is open (Web Push)">
          Notify this device, even with no tab open
        </button>
      )}
      {pushError.value ? <ErrorBox error={pushError.value} title="Push notifications are not on" /> : null}
    </span>
  );
}
