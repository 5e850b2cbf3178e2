import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { TrellisError } from '../events/index.js';

/** What became of an answer, in words a notification shows (the agent's next state is the proof). */
export interface Answered {
  readonly wait: string;
  readonly option: string;
  /** Who answered: `a push notification`, `ntfy`, `a webhook link`. */
  readonly from: string;
  /** When, as `HH:MM` in the gateway's local time. */
  readonly at: string;
  /** The agent's next state (`running`, `awaiting`), as the answer left it. */
  readonly state: string;
  /** One line for the person: `answered "Yes": the agent is working`. */
  readonly message: string;
}

/** An answer the session records for a wait (made here, in the page, the CLI or on another device): what, through which channel, when (`HH:MM`). */
export interface Prior {
  readonly option: string;
  readonly from: string;
  readonly at: string;
}

/** What the backend made of an answer: taken (with the agent's next state), not (and why), or answered before (the session's record). */
export type Delivery =
  | { readonly taken: true; readonly state: string; readonly says: string }
  | { readonly taken: false; readonly why: string }
  | { readonly taken: false; readonly already: Prior };

/** A told wait as the backend is asked about it: its session, and when it began (the inbox's `since`, ISO). */
export interface WaitRef {
  readonly project: string;
  readonly session: string;
  readonly since: string;
}

interface Tracked {
  readonly wait: string;
  readonly project: string;
  readonly session: string;
  readonly since: string;
  readonly options: readonly string[];
  ended?: string;
  answering?: { readonly option: string; readonly from: string };
  answered?: Answered;
  /** Answered where this gateway did not see it (the page through the proxy, the CLI), as the session records it. */
  elsewhere?: Prior;
}

/** How many waits (open and recently ended) are remembered: enough to say what happened to a late tap. */
const MAX_WAITS = 2000;
/** An answer token's bytes (256 bits): unguessable, and its base64url has a fixed length, so a cut one is known as cut. */
const TOKEN_BYTES = 32;
const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;

export const hhmm = (d = new Date()): string => `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
const digest = (token: string): Buffer => createHash('sha256').update(token).digest();

/**
 * The notifier's waits as things that can be answered (issue 43), each exactly once. A wait is opened
 * when it is told (with the dialog's options by name) and ended when it is withdrawn; an answer is
 * taken only while it is open and nobody answered before, the second is refused saying whose answer
 * won and when. Answer tokens (for ntfy and webhooks) are random and kept here only as their SHA-256, bound
 * to one wait and one option: random rather than an HMAC because an answer must be single-use and die
 * with its wait, which needs this table anyway (an HMAC would add a key to keep and still need the
 * table), and a table of digests leaks no usable token. The table is memory: a restarted gateway refuses
 * every older token, which is the safe way to fail.
 */
export class WaitAnswers<Door> {
  private readonly waits = new Map<string, Tracked>();
  /** Token digest (hex) → its wait and option. */
  private readonly tokens = new Map<string, { readonly wait: string; readonly option: string; readonly from: string; readonly digest: Buffer }>();

  constructor(
    /** Types the answer on the session's backend, stamped with the door and the channel (`from`). */
    private readonly deliver: (w: WaitRef, option: string, door: Door, from: string) => Promise<Delivery>,
    /** The answer the session records for a wait since it began, if any (the backend's `answered`). */
    private readonly onRecord: (w: WaitRef) => Promise<Prior | null> = async () => null,
  ) {}

  /** Remembers a told wait and its options (a repeat changes nothing). */
  open(w: { wait: string; project: string; session: string; since: string; options: readonly string[] }): void {
    if (this.waits.has(w.wait)) return;
    this.waits.set(w.wait, { wait: w.wait, project: w.project, session: w.session, since: w.since, options: [...w.options] });
    if (this.waits.size > MAX_WAITS) this.forgetOldest();
  }

  /** The wait was withdrawn: no answer is taken from now on. */
  end(wait: string): void {
    const t = this.waits.get(wait);
    if (t && !t.ended) t.ended = hhmm();
  }

  /** The wait, if remembered. */
  get(wait: string): { readonly project: string; readonly session: string; readonly options: readonly string[]; readonly open: boolean } | undefined {
    const t = this.waits.get(wait);
    return t && { project: t.project, session: t.session, options: t.options, open: !t.ended && !t.answered };
  }

  /** A new single-use token answering `wait` with `option` (one of its options), for the target `from` names (`ntfy`). */
  mint(wait: string, option: string, from: string): string {
    const t = this.waits.get(wait);
    if (!t || !t.options.includes(option)) throw new Error(`no option ${JSON.stringify(option)} on wait ${wait}`);
    const token = randomBytes(TOKEN_BYTES).toString('base64url');
    const d = digest(token);
    this.tokens.set(d.toString('hex'), { wait, option, from, digest: d });
    return token;
  }

  /** The option a token answers for `wait`, and the target it was made for; a token that is cut, made up, or another wait's is refused (403). */
  optionOfToken(wait: string, token: string): { readonly option: string; readonly from: string } {
    const bad = (what: string) => new TrellisError('FORBIDDEN', `this answer link is ${what}: nothing was answered (open the session's page to answer there)`);
    if (!TOKEN_RE.test(token)) throw bad(token.length < 43 ? 'cut short (a token has 43 characters; was the link copied whole?)' : 'not a token this gateway makes');
    const d = digest(token);
    const hit = this.tokens.get(d.toString('hex'));
    if (!hit || !timingSafeEqual(hit.digest, d)) throw bad('not one this gateway made (or it made it before it restarted)');
    if (hit.wait !== wait) throw bad("another wait's");
    return { option: hit.option, from: hit.from };
  }

  /**
   * Answers `wait` with `option`, exactly once: refused when it was answered (409, naming the answer, who
   * and when), ended (410), or is being answered; otherwise the backend answers it and the agent's next
   * state is the proof. An answer the dialog did not take leaves the wait open and says why (409).
   */
  async answer(wait: string, option: string, from: string, door: Door): Promise<Answered> {
    const t = this.waits.get(wait);
    if (!t) throw new TrellisError('WAIT_ENDED', `this gateway knows no wait ${wait}: it has ended, or the gateway restarted since it was told; open the session's page`);
    const already = (a: Prior) => new TrellisError('ALREADY_ANSWERED', `already answered: ${a.option}, from ${a.from} at ${a.at}`);
    if (t.answered ?? t.elsewhere) throw already((t.answered ?? t.elsewhere)!);
    if (t.answering) throw new TrellisError('ALREADY_ANSWERED', `already being answered: ${t.answering.option}, from ${t.answering.from}`);
    if (t.ended) {
      // Ended where this gateway did not see it: the session says whether a person answered it.
      t.elsewhere ??= (await this.onRecord(t)) ?? undefined;
      if (t.elsewhere) throw already(t.elsewhere);
      throw new TrellisError('WAIT_ENDED', `this wait ended at ${t.ended} (the agent moved on): nothing was answered`);
    }
    if (!t.options.includes(option)) throw new TrellisError('INVALID_INPUT', `the dialog offers ${t.options.map((o) => JSON.stringify(o)).join(', ') || 'no fixed options'}; ${JSON.stringify(option)} is none of them`);
    t.answering = { option, from };
    let d: Delivery;
    try {
      d = await this.deliver(t, option, door, from);
    } finally {
      t.answering = undefined;
    }
    if (!d.taken && 'already' in d) {
      t.elsewhere = d.already;
      throw already(d.already);
    }
    if (!d.taken) throw new TrellisError('SESSION_REFUSED', `not answered: ${d.why}; the wait is still open`);
    const answered: Answered = { wait, option, from, at: hhmm(), state: d.state, message: `answered "${option}" from ${from}: ${d.says}` };
    // Its tokens stay (until the wait is forgotten): a second use is told what happened, not "unknown".
    t.answered = answered;
    return answered;
  }

  /**
   * The answer a wait got, here or (asking the session) anywhere since it began; a withdraw carries it to
   * the other devices and replaces the ntfy notification with it.
   */
  async answeredOf(wait: string): Promise<Prior | undefined> {
    const t = this.waits.get(wait);
    if (!t) return undefined;
    if (!t.answered && !t.elsewhere) t.elsewhere = (await this.onRecord(t)) ?? undefined;
    const a = t.answered ?? t.elsewhere;
    return a && { option: a.option, from: a.from, at: a.at };
  }

  private forgetOldest(): void {
    for (const [k, t] of this.waits) {
      if (this.waits.size <= MAX_WAITS) break;
      if (!t.ended && !t.answered) continue;
      this.waits.delete(k);
      for (const [d, v] of this.tokens) if (v.wait === k) this.tokens.delete(d);
    }
  }
}
