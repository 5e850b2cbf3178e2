import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import webPush from 'web-push';
import { writeAtomicSync } from '../write-atomic.js';
import { isCode } from '../fs-errors.js';

/** The hub's VAPID key pair (base64url, as the Push API and web-push take them). */
export interface VapidKeys {
  readonly publicKey: string;
  readonly privateKey: string;
}

export const vapidPath = (home: string): string => join(home, 'vapid.json');

/**
 * The hub's VAPID keys, generated on first use and kept in `$TRELLIS_HOME/vapid.json` (0600): a push
 * service binds each subscription to the public key it was made with, so the pair outlives restarts.
 */
export function vapidKeys(home: string): VapidKeys {
  try {
    const k = JSON.parse(readFileSync(vapidPath(home), 'utf8')) as Partial<VapidKeys>;
    if (typeof k.publicKey === 'string' && typeof k.privateKey === 'string') return { publicKey: k.publicKey, privateKey: k.privateKey };
    throw new Error(`${vapidPath(home)} holds no publicKey and privateKey; remove it to make new keys (every device then subscribes again)`);
  } catch (err) {
    if (!isCode(err, 'ENOENT')) throw err;
  }
  const keys = webPush.generateVAPIDKeys();
  mkdirSync(home, { recursive: true });
  writeAtomicSync(vapidPath(home), `${JSON.stringify(keys, null, 2)}\n`, { mode: 0o600 });
  return keys;
}
