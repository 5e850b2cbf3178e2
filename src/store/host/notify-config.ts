import { TrellisError } from '../../events/index.js';
import { NOTIFY_KINDS, type NotifyKind } from '../../projections/notify-diff.js';
import { HHMM, type QuietHours } from '../../projections/notify-quiet.js';

/** Where notifications go: a JSON POST, ntfy's plain-text POST, or a command given the event JSON on stdin. */
export type NotifyTarget =
  | {
      readonly type: 'webhook' | 'ntfy';
      readonly url: string;
      readonly events: readonly NotifyKind[];
      /** Whether a wait's options carry single-use answer links (default true; `"answers": false` sends the names alone). */
      readonly answers: boolean;
    }
  | { readonly type: 'command'; readonly command: readonly string[]; readonly events: readonly NotifyKind[] };

/** hub.json `notify`. */
export interface NotifyConfig {
  /** A wait answered sooner than this is never told (default 5 s). */
  readonly debounceMs: number;
  /** Also tell when an agent's turn ends (awaiting{turn-end}). */
  readonly turnEnd: boolean;
  /** Project ids that tell nobody. */
  readonly mute: readonly string[];
  readonly quietHours?: QuietHours;
  readonly targets: readonly NotifyTarget[];
  /** The gateway's address as people reach it (`https://box.tail1234.ts.net/`): links in notifications start here. */
  readonly publicUrl?: string;
  /** Attempts per delivery, the first pause between them (doubled each time, at most 60 s), and how long one attempt may take. */
  readonly retry: { readonly attempts: number; readonly baseMs: number; readonly timeoutMs: number };
}

export const DEFAULT_NOTIFY: NotifyConfig = { debounceMs: 5000, turnEnd: false, mute: [], targets: [], retry: { attempts: 5, baseMs: 1000, timeoutMs: 10_000 } };

const bad = (where: string, what: string): never => {
  throw new TrellisError('INVALID_INPUT', `hub.json notify${where} ${what}`);
};
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const count = (v: unknown, where: string, min: number, max: number): number =>
  typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max ? v : bad(where, `must be a whole number from ${min} to ${max}`);

/** Every kind by default: ntfy's withdraw replaces the wait's notification (its sequence id) with what happened, rather than adding one. */
function events(v: unknown, where: string): NotifyKind[] {
  if (v === undefined) return [...NOTIFY_KINDS];
  if (!Array.isArray(v) || v.some((k) => !NOTIFY_KINDS.includes(k as NotifyKind))) return bad(`${where}.events`, `must be a list of ${NOTIFY_KINDS.map((k) => `"${k}"`).join(', ')}`);
  return v as NotifyKind[];
}

function target(t: unknown, i: number): NotifyTarget {
  const where = `.targets[${i}]`;
  if (!isObj(t)) return bad(where, 'must be an object such as {"type":"webhook","url":"https://…"}');
  if (t.type === 'webhook' || t.type === 'ntfy') {
    let url: URL | undefined;
    try {
      url = new URL(String(t.url));
    } catch {
      /* named below */
    }
    if (!url || !/^https?:$/.test(url.protocol)) return bad(`${where}.url`, 'must be an http:// or https:// URL');
    if (t.answers !== undefined && typeof t.answers !== 'boolean') return bad(`${where}.answers`, 'must be true or false (false: the options without answer links)');
    return { type: t.type, url: url.href, events: events(t.events, where), answers: t.answers !== false };
  }
  if (t.type === 'command') {
    if (!Array.isArray(t.command) || !t.command.length || t.command.some((a) => typeof a !== 'string') || !(t.command[0] as string))
      return bad(`${where}.command`, 'must be a program and its arguments, e.g. ["/usr/local/bin/tell", "--loud"] (no shell)');
    return { type: 'command', command: t.command as string[], events: events(t.events, where) };
  }
  return bad(`${where}.type`, 'must be "webhook", "ntfy" or "command"');
}

/** hub.json `notify`, checked: a wrong shape is a loud error naming the key and its repair. */
export function parseNotifyConfig(raw: unknown): NotifyConfig {
  if (raw === undefined) return DEFAULT_NOTIFY;
  if (!isObj(raw)) return bad('', 'must be an object');
  const quiet = raw.quietHours;
  if (quiet !== undefined && !(isObj(quiet) && HHMM.test(String(quiet.from)) && HHMM.test(String(quiet.to))))
    bad('.quietHours', 'must be {"from":"HH:MM","to":"HH:MM"} in the gateway’s local time');
  if (raw.mute !== undefined && !(Array.isArray(raw.mute) && raw.mute.every((m) => typeof m === 'string'))) bad('.mute', 'must be a list of project ids');
  if (raw.targets !== undefined && !Array.isArray(raw.targets)) bad('.targets', 'must be a list');
  let publicUrl: string | undefined;
  if (raw.publicUrl !== undefined) {
    try {
      publicUrl = new URL(String(raw.publicUrl)).href;
    } catch {
      /* named below */
    }
    if (!publicUrl || !/^https?:/.test(publicUrl)) bad('.publicUrl', 'must be the http(s) URL people open the dashboard at');
  }
  const retry = isObj(raw.retry) ? raw.retry : {};
  return {
    debounceMs: raw.debounceMs === undefined ? DEFAULT_NOTIFY.debounceMs : count(raw.debounceMs, '.debounceMs', 0, 3_600_000),
    turnEnd: raw.turnEnd === true,
    mute: (raw.mute as string[] | undefined) ?? [],
    ...(quiet ? { quietHours: { from: String((quiet as Record<string, unknown>).from), to: String((quiet as Record<string, unknown>).to) } } : {}),
    targets: ((raw.targets as unknown[] | undefined) ?? []).map(target),
    ...(publicUrl ? { publicUrl } : {}),
    retry: {
      attempts: retry.attempts === undefined ? DEFAULT_NOTIFY.retry.attempts : count(retry.attempts, '.retry.attempts', 1, 20),
      baseMs: retry.baseMs === undefined ? DEFAULT_NOTIFY.retry.baseMs : count(retry.baseMs, '.retry.baseMs', 1, 60_000),
      timeoutMs: retry.timeoutMs === undefined ? DEFAULT_NOTIFY.retry.timeoutMs : count(retry.timeoutMs, '.retry.timeoutMs', 100, 300_000),
    },
  };
}
