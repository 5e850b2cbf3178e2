import { randomBytes } from 'node:crypto';
import type https from 'node:https';
import type { AddressInfo, Server } from 'node:net';
import { emptyNotifyState, notifyStep, waitsOf, type NotifyEvent, type NotifyState, type Wait } from '../projections/notify-diff.js';
import { inQuietHours } from '../projections/notify-quiet.js';
import type { ProjectList } from '../projections/project-row.js';
import { DEFAULT_NOTIFY, type NotifyConfig } from '../store/host/notify-config.js';
import { NotifyDelivery, type Delivered } from '../store/host/notify-deliver.js';
import type { HubConfig } from '../store/host/hub-config.js';
import type { ProjectFeed } from './project-feed.js';
import { PushSubscribers } from './notify-push.js';
import { hhmm, WaitAnswers } from './wait-answers.js';
import { answerOnRecord, deliverAnswer } from './wait-deliver.js';
import type { Scope } from '../http/route-table.js';


/** What the notifier reads of the gateway (its state holds the notifier, so not the state itself). */
export interface NotifierSource {
  readonly opts: { readonly tls: boolean };
  hubOrError(): HubConfig | { broken: string };
  readonly feed: ProjectFeed | undefined;
  /** Whether a login's session id still holds ('loopback' on a hub without a password). */
  loginAlive(login: string): boolean;
  /** Where a project's backend answers, or null when it is offline. */
  backendUrl(project: string): Promise<string | null>;
}

/** How the door stamps an answer it lets through: who and with what scope. */
export interface AnswerDoor {
  readonly author: string;
  readonly scope: Scope;
}

/** How long a wait's options may take to read before it is told without them. */
const OPTIONS_MS = 1_500;
/** The pause between two reads of a permission's options not drawn yet. */
const OPTIONS_RETRY_MS = 100;

/** How often the hub checks whether anyone wants notifications (hub.json targets, an open page). */
const WATCH_MS = 1_000;
/** How long it keeps following after the last listener left: a page reloading or moving to a project is still listening. */
const LINGER_MS = 60_000;

/**
 * The gateway's notifier (issue 32): while anyone wants to be told (a target in hub.json `notify`, or a
 * page listening on /hub/notify/stream), it follows the project feed the host page reads, diffs each new
 * list's inbox against what it has told (projections/notify-diff.ts) and hands every event to the
 * targets' queues and the listening pages without waiting for either.
 */
export class Notifier {
  private state: NotifyState = emptyNotifyState;
  private last: { waits: Wait[]; observed: Set<string> } | undefined;
  private unsubscribe: (() => void) | undefined;
  private closed = false;
  /** The next list is the first since nobody listened: what waits then is known, not news. */
  private baseline = false;
  /** When someone last wanted notifications (ms). */
  private wantedAt = 0;
  private dueTimer: NodeJS.Timeout | undefined;
  private readonly watch: NodeJS.Timeout;
  private readonly listeners = new Set<(e: Delivered) => void>();
  readonly delivery = new NotifyDelivery();
  readonly push: PushSubscribers;
  /** The told waits, answerable exactly once (issue 43). */
  readonly answers: WaitAnswers<AnswerDoor>;
  /**
   * Each wait's events go out in order, one wait's never behind another's: its options are read before it
   * is sent (up to OPTIONS_MS), and its withdraw waits for it, while other waits go on.
   */
  private readonly chains = new Map<string, Promise<void>>();

  constructor(
    private readonly gw: NotifierSource,
    home: string,
    /** The server whose address makes the links absolute (the TLS front when there is one). */
    private readonly server: () => Server,
    pushAgent?: https.Agent,
    /** Whether a login may answer a dialog on a project (the door's shell scope, gateway/door-scope.ts mayAnswer): its pushes carry actions. */
    mayAnswer: (login: string, project: string) => boolean = () => false,
  ) {
    this.push = new PushSubscribers(home, (login) => this.gw.loginAlive(login), pushAgent, mayAnswer);
    this.answers = new WaitAnswers<AnswerDoor>(
      async (w, option, door, from) => deliverAnswer(await this.gw.backendUrl(w.project), w, option, { ...door, via: from }),
      async (w) => answerOnRecord(await this.gw.backendUrl(w.project), w),
    );
    this.watch = setInterval(() => this.follow(), WATCH_MS);
    this.watch.unref();
    setImmediate(() => this.follow());
  }

  /** Following the projects, with the first list since it started seen (its baseline taken): a wait starting now is news. */
  get settled(): boolean {
    return !!this.unsubscribe && !!this.last && !this.baseline;
  }

  /** What the notifier decided of wait `id` (`project/session/state:reason`): pending, told, silent (muted, quiet hours, or already there), or unknown. */
  statusOf(id: string): 'pending' | 'told' | 'silent' | undefined {
    return this.state.get(id)?.status;
  }

  /** Every event from now on, until the returned function is called. */
  listen(fn: (e: Delivered) => void): () => void {
    this.listeners.add(fn);
    this.follow();
    return () => {
      this.listeners.delete(fn);
    };
  }

  close(): void {
    this.closed = true;
    clearInterval(this.watch);
    clearTimeout(this.dueTimer);
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.delivery.stop();
  }

  private config(): NotifyConfig {
    const hub = this.gw.hubOrError();
    return 'broken' in hub ? DEFAULT_NOTIFY : (hub.notify ?? DEFAULT_NOTIFY);
  }

  /** Subscribes to the feed while anyone wants notifications; lets go when nobody does. */
  private follow(): void {
    if (this.closed) return;
    const now = Date.now();
    if (this.config().targets.length > 0 || this.listeners.size > 0 || this.push.size > 0) this.wantedAt = now;
    const wanted = now - this.wantedAt < LINGER_MS;
    const feed = this.gw.feed;
    if (wanted && !this.unsubscribe && feed) {
      this.baseline = true;
      this.unsubscribe = feed.subscribe((body) => this.onList(JSON.parse(body) as ProjectList));
    } else if (!wanted && this.unsubscribe) {
      this.unsubscribe();
      this.unsubscribe = undefined;
      this.last = undefined;
      clearTimeout(this.dueTimer);
    }
  }

  private onList(list: ProjectList): void {
    this.last = waitsOf(list, { turnEnd: this.config().turnEnd });
    this.step();
  }

  private step(): void {
    if (!this.last) return;
    const config = this.config();
    const now = new Date();
    const quiet = inQuietHours(config.quietHours, now.getHours(), now.getMinutes());
    const r = notifyStep(this.state, this.last, now.getTime(), {
      debounceMs: config.debounceMs,
      silenced: (w) => quiet || config.mute.includes(w.project),
      baseline: this.baseline,
      mint: () => randomBytes(9).toString('base64url'),
    });
    this.state = r.state;
    this.baseline = false;
    clearTimeout(this.dueTimer);
    if (r.due !== null) {
      this.dueTimer = setTimeout(() => this.step(), Math.max(0, r.due - now.getTime()) + 1);
      this.dueTimer.unref();
    }
    for (const e of r.events) this.emit(config, e);
  }

  private emit(config: NotifyConfig, e: NotifyEvent): void {
    const base = this.base();
    const tail = (this.chains.get(e.wait) ?? Promise.resolve())
      .then(() => this.withOptions(e))
      .then((full) => {
        const delivered: Delivered = { ...full, url: new URL(e.path, base).href };
        // Each configured target that takes answers gets tokens of its own, one per option.
        this.delivery.send(config, delivered, (t, options) => options.map((name) => ({ name, answer: this.answerUrl(base, e.wait, name, t) })));
        for (const fn of [...this.listeners]) fn(delivered);
        this.push.send(delivered, this.vapidSubject());
      })
      .catch((err: Error) => console.error(`trellis gateway: notify ${e.type} ${e.id}: ${err.message}`))
      .finally(() => {
        if (this.chains.get(e.wait) === tail) this.chains.delete(e.wait);
      });
    this.chains.set(e.wait, tail);
  }

  /**
   * A wait with its dialog's options by name (as `session answer` reads them), remembered to be answered;
   * a withdraw ends it and says what ended it: the answer (made here, or recorded by the session: the
   * page, the CLI, another device) or, with none, that the agent moved on.
   */
  private async withOptions(e: NotifyEvent): Promise<NotifyEvent & Pick<Delivered, 'options' | 'answered' | 'ended'>> {
    if (e.type === 'withdraw') {
      this.answers.end(e.wait);
      const a = await this.answers.answeredOf(e.wait);
      return a ? { ...e, answered: a } : { ...e, ended: { at: hhmm() } };
    }
    if (e.type !== 'wait') return e;
    const options = await this.readOptions(e.project.id, e.session.id);
    this.answers.open({ wait: e.wait, project: e.project.id, session: e.session.id, since: e.since, options });
    return { ...e, options };
  }

  /**
   * The dialog's options from the backend. When a permission's dialog is not drawn yet (`pending`: the
   * agent's hook can come before it) they are read again until OPTIONS_MS has passed.
   */
  private async readOptions(project: string, session: string): Promise<string[]> {
    const url = await this.gw.backendUrl(project);
    if (!url) return [];
    const deadline = Date.now() + OPTIONS_MS;
    for (;;) {
      try {
        const res = await fetch(new URL(`/api/sessions/${encodeURIComponent(session)}/dialog`, url), { signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())) });
        const d = (res.ok ? await res.json() : {}) as { options?: unknown; pending?: unknown };
        const options = Array.isArray(d.options) ? d.options.filter((o): o is string => typeof o === 'string') : [];
        if (options.length || d.pending !== true || Date.now() + OPTIONS_RETRY_MS > deadline) return options;
      } catch {
        return [];
      }
      await new Promise((r) => setTimeout(r, OPTIONS_RETRY_MS));
    }
  }

  /** A new single-use answer link for one option of one wait. */
  private answerUrl(base: string, wait: string, option: string, target: string): string {
    return new URL(`waits/${encodeURIComponent(wait)}/answer/${this.answers.mint(wait, option, target)}`, base).href;
  }

  /** Whom a push service may contact about this hub's pushes: its https address, else a placeholder mailbox. */
  private vapidSubject(): string {
    const pub = this.config().publicUrl;
    return pub?.startsWith('https:') ? new URL(pub).origin : 'mailto:trellis@localhost.invalid';
  }

  /** hub.json `notify.publicUrl` (the address a phone reaches), else the gateway's own, for absolute links. */
  private base(): string {
    const pub = this.config().publicUrl;
    if (pub) return pub;
    const scheme = this.gw.opts.tls ? 'https' : 'http';
    const a = this.server().address() as AddressInfo | null;
    const host = !a || a.address === '0.0.0.0' || a.address === '::' ? 'localhost' : a.family === 'IPv6' ? `[${a.address}]` : a.address;
    return `${scheme}://${host}${a ? `:${a.port}` : ''}/`;
  }
}
