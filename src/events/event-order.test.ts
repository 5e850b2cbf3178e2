import { describe, expect, it } from 'vitest';
import { compareKeys, isAfter, keyOf, NO_KEY, orderEvents } from './event-order.js';

const e = (clock: number, at: string, id?: string) => ({ clock, at, ...(id !== undefined ? { id } : {}) });

describe('orderEvents: (clock, at, id), each event once', () => {
  it('orders by clock, then at, then id, whatever order the walk delivered them in', () => {
    const events = [e(3, 't1', 'b'), e(2, 't9', 'z'), e(3, 't1', 'a'), e(1, 't5'), e(3, 't0', 'q')];
    expect(orderEvents(events)).toEqual([e(1, 't5'), e(2, 't9', 'z'), e(3, 't0', 'q'), e(3, 't1', 'a'), e(3, 't1', 'b')]);
    expect(orderEvents([...events].reverse())).toEqual(orderEvents(events));
  });

  it('keeps an event delivered twice once, and never mutates its input', () => {
    const events = [e(2, 't', 'x'), e(1, 't', 'o'), e(2, 't', 'x')];
    const copy = JSON.parse(JSON.stringify(events));
    expect(orderEvents(events)).toEqual([e(1, 't', 'o'), e(2, 't', 'x')]);
    expect(events).toEqual(copy);
  });

  it('an already ordered chain comes back as it is', () => {
    const chain = [e(1, 'a'), e(2, 'b'), e(3, 'a')];
    expect(orderEvents(chain)).toEqual(chain);
  });

  it('isAfter is strict; nothing is before NO_KEY', () => {
    expect(isAfter(e(1, ''), NO_KEY)).toBe(true);
    expect(isAfter(e(2, 't', 'a'), keyOf(e(2, 't', 'a')))).toBe(false);
    expect(compareKeys(keyOf(e(2, 't', 'a')), keyOf(e(2, 't', 'b')))).toBeLessThan(0);
    expect(compareKeys(keyOf(e(2, 'u')), keyOf(e(2, 't', 'z')))).toBeGreaterThan(0);
  });
});
