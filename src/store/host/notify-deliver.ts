import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import type { NotifyEvent } from '../../projections/notify-diff.js';
import type { NotifyConfig, NotifyTarget } from './notify-config.js';
import { likelyOptions, shortLabel } from '../../projections/answer-options.js';

/** Pause between attempts never exceeds this. */
const MAX_PAUSE_MS = 60_000;
/** Events waiting for one target beyond this are dropped oldest first (logged): a dead target holds no memory. */
const QUEUE_MAX = 100;

/** The event as the target receives it: with the absolute link to the session when the gateway knows its address. */
export type Delivered = NotifyEvent & {
  readonly url: string;
  /** A wait's dialog options by name, as `session answer` takes them (empty: no fixed options; absent: not a wait). */
  readonly options?: readonly string[];
  /** A withdraw of a wait a person answered (from a notification, the page, the CLI, another device): what, through which channel, when (`HH:MM`). */
  readonly answered?: { readonly option: string; readonly from: string; readonly at: string };
  /** A withdraw of a wait nobody answered: the agent moved on (when the gateway saw it end, `HH:MM`). */
  readonly ended?: { readonly at: string };
};

/** One option of a wait as a webhook or ntfy receives it: its name, and (when the target takes answers) its single-use answer URL. */
export interface AnswerLink {
  readonly name: string;
  readonly answer?: string;
}

/** What one target is sent: the event, and its options' answer links minted for this target alone. */
type Outgoing = { readonly e: Delivered; readonly links?: readonly AnswerLink[] };

/** ntfy shows at most three actions: the two most likely answers and "Open". */
const NTFY_ANSWERS = 2;

const describe = (t: NotifyTarget): string => (t.type === 'command' ? `command ${t.command[0]}` : `${t.type} ${new URL(t.url).origin}`);

/** A header value as ntfy reads it: plain ASCII as is, anything else RFC 2047 encoded. */
const header = (text: string): string => (/^[\x20-\x7e]*$/.test(text) ? text : `=?UTF-8?B?${Buffer.from(text).toString('base64')}?=`);

/** What ended a wait, in the words its replaced notification shows: `answered: Yes, from the page at 14:02`. */
export const endedWords = (e: Delivered): string =>
  e.answered ? `answered: ${e.answered.option}, from ${e.answered.from} at ${e.answered.at}` : `the agent moved on${e.ended ? ` at ${e.ended.at}` : ''}: nothing to answer`;

const line = (e: Delivered): string =>
  e.type === 'withdraw' ? `${e.session.title}: ${endedWords(e)}` : e.type === 'turn-end' ? `${e.session.title}: turn ended` : `${e.session.title} waits for ${e.waitsFor}`;

/**
 * ntfy's sequence id of a wait's notifications (ntfy 2.16+): a message published with the same
 * `X-Sequence-ID` replaces the one shown before instead of adding one, so the withdraw that ends a wait
 * replaces its notification with what happened. An older ntfy shows it as a new message. The wait's id is
 * already in the shape ntfy takes (`[-_A-Za-z0-9]`, at most 64); anything else is hashed into it.
 */
export const ntfySequenceId = (wait: string): string => (/^[-_A-Za-z0-9]{1,64}$/.test(wait) ? wait : createHash('sha256').update(wait).digest('base64url').slice(0, 32));

/** ntfy's `Actions` header: an http action POSTing each answer link (cleared once tapped), then "Open". */
function ntfyActions(e: Delivered, links: readonly AnswerLink[] | undefined): string | undefined {
  const usable = (links ?? []).filter((l): l is Required<AnswerLink> => !!l.answer);
  if (!usable.length) return undefined;
  const picked = likelyOptions(usable.map((l) => l.name), NTFY_ANSWERS).map((i) => usable[i]!);
  const quote = (s: string) => `"${s.replace(/"/g, "'")}"`;
  return [...picked.map((l) => `http, ${quote(shortLabel(l.name))}, ${l.answer}, method=POST, clear=true`), `view, Open, ${e.url}`].join('; ');
}

async function post(t: Extract<NotifyTarget, { url: string }>, { e, links }: Outgoing, timeoutMs: number): Promise<void> {
  const actions = t.type === 'ntfy' ? ntfyActions(e, links) : undefined;
  const body = e.options ? { ...e, options: links ?? e.options.map((name) => ({ name })) } : e;
  const init: RequestInit =
    t.type === 'ntfy'
      ? {
          method: 'POST',
          body: line(e),
          headers: {
            'Content-Type': 'text/plain; charset=utf-8',
            Title: header(`${e.project.name}: ${e.type === 'withdraw' ? (e.answered ? 'answered' : 'no longer waiting') : 'an agent needs you'}`),
            Click: e.url,
            Tags: e.type === 'withdraw' ? (e.answered ? 'white_check_mark' : 'fast_forward') : 'bell',
            'X-Sequence-ID': ntfySequenceId(e.wait),
            ...(actions ? { Actions: header(actions) } : {}),
          },
        }
      : { method: 'POST', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } };
  const res = await fetch(t.url, { ...init, redirect: 'error', signal: AbortSignal.timeout(timeoutMs) });
  await res.arrayBuffer().catch(() => undefined);
  if (!res.ok) throw new Error(`answered ${res.status}`);
}

function run(t: Extract<NotifyTarget, { type: 'command' }>, e: Delivered, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(t.command[0]!, t.command.slice(1), { stdio: ['pipe', 'ignore', 'pipe'], timeout: timeoutMs, killSignal: 'SIGKILL' });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err = (err + d).slice(-500)));
    child.on('error', reject);
    child.stdin.on('error', () => undefined);
    child.stdin.end(`${JSON.stringify(e)}\n`);
    child.on('close', (code, signal) => (code === 0 ? resolve() : reject(new Error(signal ? `killed by ${signal} (over ${timeoutMs} ms?)` : `exited ${code}${err ? `: ${err.trim()}` : ''}`))));
  });
}

/**
 * Each target's own queue, delivered one event at a time with bounded retries (an attempt that takes
 * longer than `retry.timeoutMs` is cut off, a hung command killed): a slow or dead target
 * delays only its own later events, never another target and never the caller (send returns at once).
 */
export class NotifyDelivery {
  private readonly queues = new Map<string, { items: Outgoing[]; busy: boolean }>();
  private stopped = false;
  /** Per target: delivered and given up (for the tests and the log). */
  readonly tally = new Map<string, { delivered: number; failed: number }>();

  /**
   * Queues `e` for every target that wants it; `links` mints a wait's answer links, called once per target
   * that takes answers (a webhook or ntfy target without `"answers": false`), so no two targets share a token.
   */
  send(config: NotifyConfig, e: Delivered, links?: (target: 'ntfy' | 'a webhook link', options: readonly string[]) => AnswerLink[]): void {
    for (const t of config.targets) {
      if (!t.events.includes(e.type)) continue;
      const key = JSON.stringify(t);
      const q = this.queues.get(key) ?? { items: [], busy: false };
      this.queues.set(key, q);
      const answers = t.type !== 'command' && t.answers && e.options?.length && links ? links(t.type === 'ntfy' ? 'ntfy' : 'a webhook link', e.options) : undefined;
      q.items.push(answers ? { e, links: answers } : { e });
      if (q.items.length > QUEUE_MAX) console.error(`trellis gateway: notify ${describe(t)}: ${q.items.splice(0, q.items.length - QUEUE_MAX).length} events dropped (the target is behind)`);
      if (!q.busy) void this.drain(t, key, q, config.retry);
    }
  }

  stop(): void {
    this.stopped = true;
  }

  private async drain(t: NotifyTarget, key: string, q: { items: Outgoing[]; busy: boolean }, retry: NotifyConfig['retry']): Promise<void> {
    q.busy = true;
    const tally = this.tally.get(key) ?? { delivered: 0, failed: 0 };
    this.tally.set(key, tally);
    for (let item = q.items.shift(); item && !this.stopped; item = q.items.shift()) {
      const e = item.e;
      for (let attempt = 1; ; attempt++) {
        try {
          await (t.type === 'command' ? run(t, e, retry.timeoutMs) : post(t, item, retry.timeoutMs));
          tally.delivered++;
          break;
        } catch (err) {
          const why = (err as Error).message;
          if (this.stopped) break;
          if (attempt >= retry.attempts) {
            tally.failed++;
            console.error(`trellis gateway: notify ${describe(t)}: gave up on ${e.type} ${e.id} after ${attempt} attempts: ${why}`);
            break;
          }
          const pause = Math.min(retry.baseMs * 2 ** (attempt - 1), MAX_PAUSE_MS);
          console.error(`trellis gateway: notify ${describe(t)}: attempt ${attempt} failed (${why}); again in ${pause} ms`);
          await new Promise((r) => setTimeout(r, pause).unref());
        }
      }
    }
    q.busy = false;
  }
}
