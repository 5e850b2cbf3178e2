import { TrellisError } from '../../events/errors.js';
import { keyOf, orderEvents } from '../../events/event-order.js';
import type { GitAppendLog } from '../git/append-log.js';
import { parseChain } from './parse-chain.js';
import type { StoredEvent, StreamKind } from './stream-kind.js';

/*
 * A stream kind's events in and out as records (`trellis export` / `import`, NDJSON): every stream's
 * events as stored, and recorded events appended each once, all or nothing.
 */

/** How often an import plans again after another writer moved one of its streams. */
const IMPORT_ATTEMPTS = 10;

/**
 * Every stream's events as stored, each stream's in fold order (an NDJSON export). `keep` picks the
 * streams by their folded state. A stream that cannot be read is an error naming it: an export that
 * silently left one out would not round-trip.
 */
export async function exportEvents<E extends StoredEvent, S, C>(log: GitAppendLog, kind: StreamKind<E, S, C>, keep: (state: S) => boolean): Promise<{ id: string; event: E; text: string }[]> {
  const tips = [...log.tips(kind.refPrefix)];
  const out: { id: string; event: E; text: string }[] = [];
  let failure: string | undefined;
  await log.readEach(
    tips.map(([, tip]) => ({ tip, stopAt: null })),
    (i, result) => {
      const id = tips[i]![0];
      const parsed = parseChain(kind, result);
      if ('reason' in parsed) {
        failure ??= unreadable(kind, id, parsed);
        return;
      }
      const ordered = orderEvents(parsed.events.map((p) => p.event));
      const state = ordered.reduce((s, e) => kind.evolve(s, e), kind.initial(id));
      if (!keep(state)) return;
      const text = new Map(parsed.events.map((p) => [p.event, p.text]));
      for (const event of ordered) out.push({ id, event, text: text.get(event)! });
    },
  );
  if (failure) throw new TrellisError('CORRUPT_EVENT', failure);
  return out;
}

/**
 * Appends recorded events (an NDJSON import) to their streams, each event once: an event whose key
 * (clock, at, id) its stream already holds is skipped, so importing twice adds nothing. Every stream is
 * checked before anything is written (a new stream must begin with the kind's first event), and all
 * streams move in one transaction, each from the tip it was planned on: all is imported or nothing.
 */
export async function importEvents<E extends StoredEvent, S, C>(log: GitAppendLog, kind: StreamKind<E, S, C>, streams: ReadonlyMap<string, readonly E[]>): Promise<{ streams: number; events: number }> {
  const done = { streams: 0, events: 0 };
  let ids = [...streams.keys()];
  for (let attempt = 0; attempt < IMPORT_ATTEMPTS; attempt++) {
    const plans = (await importPlans(log, kind, ids, streams)).filter((p) => p.fresh.length > 0);
    if (plans.length === 0) return done;
    const chains = plans.map((p) => ({
      ref: `${kind.refPrefix}${p.id}`,
      expected: p.tip,
      records: p.fresh.map((e) => ({ bytes: Buffer.from(JSON.stringify(e)), subject: kind.describe(e), author: e.by, at: new Date(e.at) })),
    }));
    const written = await log.bulkAppend(chains);
    // A stream whose ref is not at the tip written for it (the batch was refused, or another writer
    // made the ref at the same moment) is planned again; what landed is not planned twice.
    const again: string[] = [];
    const tipOf = tipReader(log, kind, plans.length);
    for (const p of plans) {
      const oid = written?.get(`${kind.refPrefix}${p.id}`);
      if (oid !== undefined && tipOf(p.id) === oid) {
        done.streams++;
        done.events += p.fresh.length;
      } else again.push(p.id);
    }
    if (again.length === 0) return done;
    ids = again;
  }
  throw new TrellisError('APPEND_CONFLICT', `threads kept moving under ${IMPORT_ATTEMPTS} attempts to import (${done.events} events were imported); import again to add the rest`);
}

/** Reads tips one by one for a few streams, or every tip of the kind at once for many. */
function tipReader(log: GitAppendLog, kind: StreamKind<StoredEvent, unknown, unknown>, count: number): (id: string) => string | null {
  if (count <= 64) return (id) => log.tip(`${kind.refPrefix}${id}`);
  const all = log.tips(kind.refPrefix);
  return (id) => all.get(id) ?? null;
}

async function importPlans<E extends StoredEvent, S, C>(log: GitAppendLog, kind: StreamKind<E, S, C>, ids: readonly string[], streams: ReadonlyMap<string, readonly E[]>): Promise<{ id: string; tip: string | null; fresh: E[] }[]> {
  const tips = ids.map(tipReader(log, kind, ids.length));
  const have = new Map<string, Set<string>>();
  const present: { id: string; tip: string }[] = [];
  ids.forEach((id, i) => tips[i] !== null && present.push({ id, tip: tips[i]! }));
  let failure: string | undefined;
  await log.readEach(
    present.map(({ tip }) => ({ tip, stopAt: null })),
    (i, result) => {
      const { id } = present[i]!;
      const parsed = parseChain(kind, result);
      if ('reason' in parsed) failure ??= unreadable(kind, id, parsed);
      else have.set(id, new Set(parsed.events.map((p) => keyText(p.event))));
    },
  );
  if (failure) throw new TrellisError('CORRUPT_EVENT', `${failure}; nothing was imported`);
  return ids.map((id, i) => {
    const known = have.get(id) ?? new Set<string>();
    const fresh = orderEvents(streams.get(id) ?? []).filter((e) => !known.has(keyText(e)));
    const first = (fresh[0] as { type?: unknown } | undefined)?.type;
    if (tips[i] === null && fresh.length && first !== kind.firstEvent) {
      throw new TrellisError('INVALID_INPUT', `${kind.noun} ${id} is not here and its events do not begin with '${kind.firstEvent}'; nothing was imported`);
    }
    return { id, tip: tips[i]!, fresh };
  });
}

/** How a chain that cannot be read is named in an export's or an import's error. */
function unreadable(kind: StreamKind<StoredEvent, unknown, unknown>, id: string, p: { commit: string; reason: string }): string {
  return `${kind.noun} ${id} cannot be read: ${kind.refPrefix}${id} at ${p.commit}: ${p.reason}`;
}

/** An event's fold key as one string: two events with equal keys are one event. */
const keyText = (e: StoredEvent): string => {
  const k = keyOf(e);
  return `${k.clock}\u0000${k.at}\u0000${k.id}`;
};
