import type { ProjectList } from './project-row.js';

/**
 * Notifications from the host inbox (issue 32): a pure diff of what the gateway already computes. Each
 * wait on a person is told once, after it has lasted `debounceMs` (a permission answered within a few
 * seconds is no news), not again while it lasts, and withdrawn when it ends, if it was told.
 */

/** What a notification is about: a person is needed (`wait`), a turn ended (`turn-end`, opt-in), or it is over (`withdraw`). */
export type NotifyKind = 'wait' | 'turn-end' | 'withdraw';
export const NOTIFY_KINDS: readonly NotifyKind[] = ['wait', 'turn-end', 'withdraw'];

/** One session waiting on a person, as the inbox says. */
export interface Wait {
  /** Project, session and what it waits for: a new reason is a new wait. */
  readonly key: string;
  readonly kind: 'wait' | 'turn-end';
  readonly project: string;
  readonly projectName: string;
  readonly session: string;
  readonly title: string;
  readonly waitsFor: string;
  readonly since: string;
}

/** The event handed to every target, the page and the push service. */
export interface NotifyEvent {
  readonly type: NotifyKind;
  /** The wait's key: a withdraw names the wait it ends. */
  readonly id: string;
  /**
   * This one wait's own id, stable while it lasts and never reused (a second permission dialog of the same
   * session is a new wait with a new id, though its key is the same): what an answer names.
   */
  readonly wait: string;
  readonly project: { readonly id: string; readonly name: string };
  readonly session: { readonly id: string; readonly title: string };
  readonly waitsFor: string;
  /** The session's page, relative to the gateway (`/p/<project>/#/sessions/<id>`). */
  readonly path: string;
  readonly since: string;
}

interface Tracked {
  readonly wait: Wait;
  /** The wait's own id (NotifyEvent.wait), minted when it was first seen. */
  readonly waitId: string;
  /** When this gateway first saw it (ms). */
  readonly seen: number;
  /** `told` once sent; `silent` when its time came in a muted project or quiet hours (never told, never withdrawn). */
  readonly status: 'pending' | 'told' | 'silent';
}

export type NotifyState = ReadonlyMap<string, Tracked>;
export const emptyNotifyState: NotifyState = new Map();

/** Which inbox entries are waits on a person: awaiting anything (a turn end only when opted in), and quarantined. */
export function waitsOf(list: ProjectList, opts: { readonly turnEnd: boolean }): { waits: Wait[]; observed: Set<string> } {
  const waits: Wait[] = [];
  const observed = new Set<string>();
  for (const p of list.projects) {
    // An offline project (or one whose counts failed) says nothing: its waits are neither new nor over.
    if (!p.online || !p.inbox) continue;
    observed.add(p.id);
    for (const e of p.inbox) {
      const turnEnd = e.state === 'awaiting' && e.reason === 'turn-end';
      if (!(e.state === 'awaiting' || e.state === 'quarantined') || (turnEnd && !opts.turnEnd)) continue;
      waits.push({
        key: `${p.id}/${e.session}/${e.state}:${e.reason ?? ''}`,
        kind: turnEnd ? 'turn-end' : 'wait',
        project: p.id,
        projectName: p.name,
        session: e.session,
        title: e.title,
        waitsFor: e.waitsFor,
        since: e.since,
      });
    }
  }
  return { waits, observed };
}

export const eventOf = (type: NotifyKind, w: Wait, wait: string): NotifyEvent => ({
  type,
  id: w.key,
  wait,
  project: { id: w.project, name: w.projectName },
  session: { id: w.session, title: w.title },
  waitsFor: w.waitsFor,
  path: `/p/${w.project}/#/sessions/${w.session}`,
  since: w.since,
});

/**
 * One step: the waits seen now (in the `observed` projects) against those tracked. Returns the new state,
 * the events to send, and when the next pending wait comes due (so the caller steps again then, with the
 * same waits, even if nothing changes). With `baseline`, the first look after nobody was listening (a
 * gateway starting, a page opening), waits not tracked yet are known but never told: no burst of old
 * news, and a restarted gateway does not tell again what it told before.
 */
export function notifyStep(
  prev: NotifyState,
  now: { readonly waits: readonly Wait[]; readonly observed: ReadonlySet<string> },
  at: number,
  opts: {
    readonly debounceMs: number;
    readonly silenced: (w: Wait) => boolean;
    readonly baseline?: boolean;
    /** A new wait's id (the gateway's: random); by default `<key>@<first seen ms>`. */
    readonly mint?: (w: Wait, at: number) => string;
  },
): { state: NotifyState; events: NotifyEvent[]; due: number | null } {
  const next = new Map<string, Tracked>();
  const events: NotifyEvent[] = [];
  let due: number | null = null;
  const current = new Set(now.waits.map((w) => w.key));
  for (const [key, t] of prev) {
    if (current.has(key)) continue;
    if (!now.observed.has(t.wait.project)) next.set(key, t);
    else if (t.status === 'told') events.push(eventOf('withdraw', t.wait, t.waitId));
  }
  for (const w of now.waits) {
    const t = prev.get(w.key) ?? { wait: w, waitId: opts.mint?.(w, at) ?? `${w.key}@${at}`, seen: at, status: opts.baseline ? ('silent' as const) : ('pending' as const) };
    if (t.status !== 'pending') {
      next.set(w.key, { ...t, wait: w });
      continue;
    }
    const ripe = t.seen + opts.debounceMs;
    if (at < ripe) {
      next.set(w.key, { ...t, wait: w });
      due = due === null ? ripe : Math.min(due, ripe);
    } else if (opts.silenced(w)) next.set(w.key, { ...t, wait: w, status: 'silent' });
    else {
      next.set(w.key, { ...t, wait: w, status: 'told' });
      events.push(eventOf(w.kind, w, t.waitId));
    }
  }
  return { state: next, events, due };
}
