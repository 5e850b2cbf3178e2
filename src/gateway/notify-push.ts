import type https from 'node:https';
import type { Delivered } from '../store/host/notify-deliver.js';
import { vapidKeys } from '../store/host/push-keys.js';
import { sendPush, type PushSubscriptionJson } from '../store/host/push-send.js';
import { likelyOptions, shortLabel } from '../projections/answer-options.js';

/** Who made a subscription: a login's session id, or `loopback` on a hub without a password (no logins). */
export type LoginKey = string;

/** A title no push payload needs more of (a push message holds about 4 KB). */
const TITLE_MAX = 200;

/**
 * Web Push subscriptions, per login, held as long as the login (in memory, as logins are): dropped at
 * logout, when the login has ended (expired, or a new admin password) at the next push, and when the
 * push service answers 404 or 410. A page that opens after a new login subscribes again by itself.
 */
export class PushSubscribers {
  private readonly byEndpoint = new Map<string, { login: LoginKey; sub: PushSubscriptionJson }>();

  constructor(
    private readonly home: string,
    /** Whether a login still holds (a revoked or expired one no longer receives anything). */
    private readonly alive: (login: LoginKey) => boolean,
    /** The TLS agent for push services (a test's stand-in CA); the default trusts the system's CAs. */
    private readonly agent?: https.Agent,
    /** Whether a login may answer a dialog on a project (the door's shell scope): only then does its push carry actions. */
    private readonly mayAnswer: (login: LoginKey, project: string) => boolean = () => false,
  ) {}

  add(login: LoginKey, sub: PushSubscriptionJson): void {
    this.byEndpoint.set(sub.endpoint, { login, sub });
  }

  remove(login: LoginKey, endpoint: string): boolean {
    const s = this.byEndpoint.get(endpoint);
    if (s?.login !== login) return false;
    return this.byEndpoint.delete(endpoint);
  }

  dropLogin(login: LoginKey): void {
    for (const [endpoint, s] of this.byEndpoint) if (s.login === login) this.byEndpoint.delete(endpoint);
  }

  /** How many subscriptions `login` holds. */
  countOf(login: LoginKey): number {
    return [...this.byEndpoint.values()].filter((s) => s.login === login).length;
  }

  get size(): number {
    return this.byEndpoint.size;
  }

  publicKey(): string {
    return vapidKeys(this.home).publicKey;
  }

  /** Pushes `e` to every live login's subscriptions, without waiting; failures are logged. */
  send(e: Delivered, subject: string): void {
    if (!this.byEndpoint.size) return;
    const keys = vapidKeys(this.home);
    const payloads = new Map<boolean, string>();
    for (const [endpoint, s] of this.byEndpoint) {
      if (!this.alive(s.login)) {
        this.byEndpoint.delete(endpoint);
        continue;
      }
      const may = !!e.options?.length && this.mayAnswer(s.login, e.project.id);
      const payload = payloads.get(may) ?? pushPayload(e, may);
      payloads.set(may, payload);
      sendPush(s.sub, payload, keys, subject, this.agent).then(
        (r) => {
          if (r === 'gone' && this.byEndpoint.get(endpoint) === s) this.byEndpoint.delete(endpoint);
        },
        (err: Error) => console.error(`trellis gateway: push to ${new URL(endpoint).origin} failed: ${err.message}`),
      );
    }
  }
}

/** How many answers a phone shows beside "Open" (a notification shows two or three actions). */
const PUSH_ANSWERS = 2;
/** A push message holds about 4 KB: options beyond this many are left to the page. */
const OPTIONS_MAX = 8;

/**
 * The push's JSON: the event, and for a login that may answer (`answering`), the dialog's options and
 * its two most likely as actions (`answer:<index>`, the title the option's own words shortened); a login
 * that may not gets neither, so its notification offers "Open" only.
 */
export function pushPayload(e: Delivered, answering: boolean): string {
  const { options, ...rest } = e;
  const base = { ...rest, session: { ...e.session, title: e.session.title.slice(0, TITLE_MAX) } };
  if (!answering || !options?.length) return JSON.stringify({ ...base, options: [], actions: [] });
  const kept = options.slice(0, OPTIONS_MAX).map((o) => o.slice(0, TITLE_MAX));
  const actions = likelyOptions(kept, PUSH_ANSWERS).map((i) => ({ action: `answer:${i}`, title: shortLabel(kept[i]!) }));
  return JSON.stringify({ ...base, options: kept, actions });
}
