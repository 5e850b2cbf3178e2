import { describe, expect, it } from 'vitest';
import { describeEvent, parseThreadEvent, type ThreadEvent } from './thread-events.js';

const good = { v: 1, type: 'replied', at: '2026-03-01T10:00:00.000Z', by: 'ann', clock: 2, data: { body: 'hi', evidence: [] } };
const text = (o: unknown) => JSON.stringify(o);

describe('parseThreadEvent', () => {
  it('accepts a well-formed event', () => {
    expect(parseThreadEvent(text(good))).toEqual({ ok: true, event: good });
  });

  it('accepts a close with or without the session whose merged change closed it, and says it in the commit line', () => {
    const closed = { ...good, type: 'closed', data: { session: 'fix-1' } };
    expect(parseThreadEvent(text(closed))).toEqual({ ok: true, event: closed });
    expect(describeEvent(closed as ThreadEvent)).toBe('close: landed (merged in session fix-1)');
    expect(describeEvent({ ...closed, data: {} } as ThreadEvent)).toBe('close: landed');
  });

  it('accepts a v2 event with its id, and a v2 resolve naming a reply by id', () => {
    const v2 = { ...good, v: 2, id: 'k3v9x2m4p7qa' };
    expect(parseThreadEvent(text(v2))).toEqual({ ok: true, event: v2 });
    const resolve = { ...v2, type: 'resolved', data: { reply: 'v1-2' } };
    expect(parseThreadEvent(text(resolve))).toEqual({ ok: true, event: resolve });
  });

  it.each([
    ['not JSON', '{"v":1,', /is not JSON/],
    ['an array', '[]', /not a JSON object/],
    ['a future format', text({ ...good, v: 3 }), /format 3.*upgrade trellis/],
    ['a v2 event without an id', text({ ...good, v: 2 }), /"id"/],
    ['a v1 event with an id', text({ ...good, id: 'abc' }), /"id"/],
    ['a v2 resolve naming a position', text({ ...good, v: 2, id: 'e1', type: 'resolved', data: { reply: 2 } }), /data\.reply/],
    ['an unknown type', text({ ...good, type: 'merged' }), /unknown type "merged"/],
    ['a close naming a session that is not a string', text({ ...good, type: 'closed', data: { session: 7 } }), /data\.session/],
    ['a bad timestamp', text({ ...good, at: 'yesterday' }), /"at"/],
    ['no author', text({ ...good, by: 7 }), /"by"/],
    ['a zero clock', text({ ...good, clock: 0 }), /"clock"/],
    ['a fractional clock', text({ ...good, clock: 1.5 }), /"clock"/],
    ['no data', text({ ...good, data: null }), /"data"/],
    ['a data field of the wrong type', text({ ...good, data: { body: 3, evidence: [] } }), /data\.body/],
    ['evidence that is not a list of strings', text({ ...good, data: { body: 'x', evidence: [1] } }), /data\.evidence/],
    ['a reply number of 0', text({ ...good, type: 'resolved', data: { reply: 0 } }), /data\.reply/],
    ['a scope without a scenario', text({ ...good, type: 'opened', data: { concern: 'c', body: '', nodes: [], scope: {} } }), /data\.scope/],
  ])('refuses %s, saying why', (_, input, reason) => {
    const out = parseThreadEvent(input);
    expect(out.ok).toBe(false);
    if (!out.ok) expect(out.reason).toMatch(reason);
  });
});

describe('describeEvent: the commit subject reads as the event', () => {
  const meta = { v: 1, at: good.at, by: 'ann', clock: 1 } as const;
  it.each<[ThreadEvent, string]>([
    [{ ...meta, type: 'opened', data: { concern: 'Login forgets email', body: '', nodes: [] } }, 'open: Login forgets email'],
    [{ ...meta, type: 'replied', data: { body: 'first line\nsecond', evidence: [] } }, 'reply: first line'],
    [{ ...meta, type: 'replied', data: { body: 'x'.repeat(80), evidence: [] } }, `reply: ${'x'.repeat(57)}...`],
    [{ ...meta, type: 'remarked', data: { body: 'looks off', reading: 'r2', evidence: [] } }, 'remark on r2: looks off'],
    [{ ...meta, type: 'resolved', data: { reply: 3 } }, 'resolve: reply 3'],
    [{ ...meta, type: 'retracted', data: { reply: 1 } }, 'retract: reply 1'],
    [{ ...meta, type: 'closed', data: {} }, 'close: landed'],
    [{ ...meta, type: 'promoted', data: { forgeId: 'github.com#4', url: 'u' } }, 'promote: github.com#4'],
  ])('%#', (event, subject) => expect(describeEvent(event)).toBe(subject));
});
