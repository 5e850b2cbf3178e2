import type https from 'node:https';
import webPush from 'web-push';
import type { VapidKeys } from './push-keys.js';

/** A browser's push subscription, as PushSubscription.toJSON() gives it. */
export interface PushSubscriptionJson {
  readonly endpoint: string;
  readonly keys: { readonly p256dh: string; readonly auth: string };
}

/** How long a push service keeps a message for a device that is offline (a wait is stale after a day). */
const TTL_S = 24 * 60 * 60;
const PUSH_MS = 10_000;

/**
 * One push, encrypted per RFC 8291 (aes128gcm) and signed with the hub's VAPID key (RFC 8292) by
 * web-push. `gone` when the push service says the subscription no longer exists (404, 410).
 */
export async function sendPush(sub: PushSubscriptionJson, payload: string, keys: VapidKeys, subject: string, agent?: https.Agent): Promise<'sent' | 'gone'> {
  try {
    await webPush.sendNotification(sub, payload, {
      vapidDetails: { subject, publicKey: keys.publicKey, privateKey: keys.privateKey },
      TTL: TTL_S,
      urgency: 'high',
      timeout: PUSH_MS,
      contentEncoding: 'aes128gcm',
      ...(agent ? { agent } : {}),
    });
    return 'sent';
  } catch (err) {
    const status = (err as { statusCode?: number }).statusCode;
    if (status === 404 || status === 410) return 'gone';
    throw err;
  }
}
