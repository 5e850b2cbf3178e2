import { isObject, parseStoredEvent, str, strs, type Check, type ParsedEvent } from './stored-json.js';

/**
 * The events of one issue thread, as stored in `event.json` of each commit on `refs/trellis/issues/<id>`.
 *
 * Format versions (`v`):
 *   1 — initial format. resolved/unresolved/retracted name the reply by its 1-based position.
 *   2 — every event carries a stable `id` (minted by the writer, unique across clones); resolved,
 *       unresolved and retracted name the reply by the id of the event that wrote it, so a reply keeps its
 *       name when a merge of two clones' histories interleaves replies (issue 14). v1 events still read:
 *       a v1 reply's id is `v1-<clock>`, and a v1 position names the reply at that place in the v1 chain
 *       (v1 events are a linear prefix of any thread and fold first, by clock).
 * New events are written in EVENT_FORMAT. A reader refuses a version it does not know rather than
 * guessing at it.
 */
export const EVENT_FORMAT = 2 as const;

/** The formats this reader knows. */
export type ThreadEventFormat = 1 | 2;

/** Position of a reply in `replies`, 1-based (DESIGN.md §5): what people type. */
export type ReplyNumber = number;

/** How a stored event names a reply: its position (v1) or its event id (v2). */
export type ReplyRef = ReplyNumber | string;

/** The id a v1 event is known by: its clock, unique along the linear v1 chain that wrote it. */
export const v1EventId = (clock: number): string => `v1-${clock}`;

/** An event's stable id: its own (v2), or the one derived from its clock (v1). */
export const threadEventId = (e: { readonly id?: string; readonly clock: number }): string => e.id ?? v1EventId(e.clock);

export interface EventMeta {
  /** Format version of the stored event. */
  readonly v: ThreadEventFormat;
  /** The event's stable id (v2; absent on v1 events). */
  readonly id?: string;
  /** ISO-8601 instant with milliseconds. */
  readonly at: string;
  /** Author: a session id, a git user name, or `human`. */
  readonly by: string;
  /** Lamport clock of the stream: the previous event's clock + 1, starting at 1. */
  readonly clock: number;
}

/** What an eval-remark thread is about: a scenario and, optionally, the reading it was filed against. */
export interface ScenarioScope {
  readonly scenario: string;
  /** The reading the remark is filed against (absent on threads opened before readings existed). */
  readonly reading?: string;
  /** The reading's filer: the thread's originator for loop-in (spec §4.6.4). */
  readonly originator?: string;
}

export type ThreadEvent =
  | (EventMeta & {
      readonly type: 'opened';
      readonly data: {
        readonly concern: string;
        readonly body: string;
        readonly nodes: readonly string[];
        /** Present only on eval-remark threads, which are never issues. */
        readonly scope?: ScenarioScope;
      };
    })
  | (EventMeta & { readonly type: 'replied'; readonly data: { readonly body: string; readonly evidence: readonly string[] } })
  | (EventMeta & {
      readonly type: 'remarked';
      readonly data: { readonly body: string; readonly reading: string; readonly evidence: readonly string[] };
    })
  | (EventMeta & { readonly type: 'resolved'; readonly data: { readonly reply: ReplyRef } })
  | (EventMeta & { readonly type: 'unresolved'; readonly data: { readonly reply: ReplyRef } })
  | (EventMeta & { readonly type: 'retracted'; readonly data: { readonly reply: ReplyRef } })
  /** `session`: the session whose change, merged into trunk, this close says is done (like a forge's "fixes #n"). */
  | (EventMeta & { readonly type: 'closed'; readonly data: { readonly session?: string } })
  /** The concern and/or body rewritten; the event before it keeps the old text (git log shows every version). */
  | (EventMeta & { readonly type: 'edited'; readonly data: { readonly concern?: string; readonly body?: string } })
  /** A landed local thread open again. */
  | (EventMeta & { readonly type: 'reopened'; readonly data: Record<string, never> })
  | (EventMeta & { readonly type: 'promoted'; readonly data: { readonly forgeId: string; readonly url: string } });

export type ThreadEventType = ThreadEvent['type'];

/** An event together with the stream (thread id) it belongs to, as in the NDJSON fixtures. */
export interface RecordedEvent {
  readonly stream: string;
  readonly event: ThreadEvent;
}

/**
 * Parses one stored event. Returns the event, or a one-line reason it is not one.
 *
 * Hand-written rather than an arktype schema: this runs on every CLI read, and importing arktype costs
 * ~180 ms of start-up, more than the whole `trellis issue reply` budget (measured; see bench/).
 * @example parseThreadEvent('{"v":2,"id":"k3v9x2m4p7qa","type":"closed","at":"...","by":"ann","clock":3,"data":{}}')
 */
export function parseThreadEvent(text: string): ParsedEvent<ThreadEvent> {
  return parseStoredEvent<ThreadEvent>(text, eventProblem);
}

const replyNo: Check = (v) => Number.isInteger(v) && (v as number) >= 1;
const EVENT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const eventId: Check = (v) => typeof v === 'string' && EVENT_ID.test(v);
const optStr: Check = (v) => v === undefined || str(v);
const scope: Check = (v) => v === undefined || (isObject(v) && str(v.scenario) && optStr(v.reading) && optStr(v.originator));

const DATA: Record<ThreadEventType, Record<string, Check>> = {
  opened: { concern: str, body: str, nodes: strs, scope },
  replied: { body: str, evidence: strs },
  remarked: { body: str, reading: str, evidence: strs },
  resolved: { reply: replyNo },
  unresolved: { reply: replyNo },
  retracted: { reply: replyNo },
  closed: { session: optStr },
  edited: { concern: optStr, body: optStr },
  reopened: {},
  promoted: { forgeId: str, url: str },
};

/** Why a parsed JSON value is not a thread event, or null when it is one (an NDJSON import's check). */
export const threadEventProblem = (raw: unknown): string | null => eventProblem(raw);

function eventProblem(raw: unknown): string | null {
  if (!isObject(raw)) return 'is not a JSON object';
  if (raw.v !== 1 && raw.v !== 2) {
    return `has format ${JSON.stringify(raw.v)}, this trellis knows v1 and v2${typeof raw.v === 'number' && raw.v > EVENT_FORMAT ? '; upgrade trellis' : ''}`;
  }
  if (raw.v === 2 && !eventId(raw.id)) return 'has no valid "id" (a v2 event names itself)';
  if (raw.v === 1 && raw.id !== undefined) return 'is v1 but carries an "id" (only v2 events do)';
  if (typeof raw.type !== 'string' || !Object.hasOwn(DATA, raw.type)) return `has unknown type ${JSON.stringify(raw.type)}`;
  if (!str(raw.at) || Number.isNaN(Date.parse(raw.at as string))) return 'has no valid "at" timestamp';
  if (!str(raw.by)) return 'has no "by" author';
  if (!Number.isInteger(raw.clock) || (raw.clock as number) < 1) return 'has no valid "clock"';
  if (!isObject(raw.data)) return 'has no "data" object';
  for (const [field, ok] of Object.entries(DATA[raw.type as ThreadEventType])) {
    // v2 names a reply by its event id where v1 named its position.
    const check = field === 'reply' && raw.v === 2 ? eventId : ok;
    if (!check(raw.data[field])) return `has a ${raw.type} event whose data.${field} is missing or of the wrong type`;
  }
  return null;
}

/**
 * The first line of the commit message: the event read as a sentence, so `git log <ref>` is an audit.
 * A reply named by id reads by its position when the thread's reply ids are at hand (as people typed it).
 */
export function describeEvent(event: ThreadEvent, replyIds?: readonly string[]): string {
  const reply = (ref: ReplyRef) => {
    const at = typeof ref === 'string' && replyIds ? replyIds.indexOf(ref) : -1;
    return at >= 0 ? String(at + 1) : String(ref);
  };
  const words = (s: string) => {
    const line = s.split('\n', 1)[0]!.trim();
    return line.length > 60 ? `${line.slice(0, 57)}...` : line;
  };
  switch (event.type) {
    case 'opened':
      return `open: ${words(event.data.concern)}`;
    case 'replied':
      return `reply: ${words(event.data.body) || '(empty)'}`;
    case 'remarked':
      return `remark on ${words(event.data.reading)}: ${words(event.data.body) || '(empty)'}`;
    case 'resolved':
      return `resolve: reply ${reply(event.data.reply)}`;
    case 'unresolved':
      return `unresolve: reply ${reply(event.data.reply)}`;
    case 'retracted':
      return `retract: reply ${reply(event.data.reply)}`;
    case 'closed':
      return event.data.session ? `close: landed (merged in session ${event.data.session})` : 'close: landed';
    case 'edited':
      return `edit: ${[event.data.concern !== undefined ? `concern "${words(event.data.concern)}"` : '', event.data.body !== undefined ? 'body' : ''].filter(Boolean).join(' and ') || '(nothing)'}`;
    case 'reopened':
      return 'reopen: open';
    case 'promoted':
      return `promote: ${event.data.forgeId}`;
  }
}
