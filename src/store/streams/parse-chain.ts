import type { ChainResult } from '../git/chain.js';
import type { StoredEvent, StreamKind } from './stream-kind.js';

/** A chain's events as stored (text) and parsed, or the commit that cannot be read or parsed and why. */
export function parseChain<E extends StoredEvent>(kind: Pick<StreamKind<E, unknown, unknown>, 'parse'>, result: ChainResult): { events: { event: E; text: string }[] } | { commit: string; reason: string } {
  if (!result.ok) return { commit: result.oid, reason: result.reason };
  const events: { event: E; text: string }[] = [];
  for (const { oid, bytes } of result.entries) {
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
    const parsed = kind.parse(text);
    if (!parsed.ok) return { commit: oid, reason: `event.json ${parsed.reason}` };
    events.push({ event: parsed.event, text });
  }
  return { events };
}
