import { describe, expect, it } from 'vitest';
import { message, SseFanout } from '../src/http/sse-fanout.js';

/*
 * The graph stream's fan-out (issue 22): an event is encoded once and the same bytes are queued for every
 * subscriber; one that stops reading is closed instead of growing the server's memory.
 */

const text = (b: Uint8Array) => new TextDecoder().decode(b);

describe('SSE fan-out', () => {
  it('queues the very same bytes for every subscriber, after each one’s own first message', async () => {
    const fanout = new SseFanout();
    const readers = [0, 1, 2].map((i) => fanout.open(message('ready', `{"n":${i}}`)).getReader());
    expect(fanout.size).toBe(3);
    fanout.broadcast('graph', '{"cause":"issues"}');
    const firsts = await Promise.all(readers.map((r) => r.read()));
    firsts.forEach((f, i) => expect(text(f.value!)).toBe(`event: ready\ndata: {"n":${i}}\n\n`));
    const events = await Promise.all(readers.map((r) => r.read()));
    expect(text(events[0]!.value!)).toBe('event: graph\ndata: {"cause":"issues"}\n\n');
    // Encoded once: one Uint8Array, the same object in every subscriber's queue.
    for (const e of events.slice(1)) expect(e.value).toBe(events[0]!.value);
    await readers[1]!.cancel();
    expect(fanout.size).toBe(2);
    for (const r of [readers[0]!, readers[2]!]) await r.cancel();
    expect(fanout.size).toBe(0);
  });

  it('closes a subscriber that stops reading once its queue passes the limit; the others keep getting events', async () => {
    const fanout = new SseFanout(15_000, 4_096);
    const slow = fanout.open(message('ready', '{}')).getReader();
    const fast = fanout.open(message('ready', '{}')).getReader();
    await fast.read();
    const payload = 'x'.repeat(1_000);
    let fastGot = 0;
    for (let i = 0; i < 20; i++) {
      fanout.broadcast('graph', payload);
      if ((await fast.read()).value) fastGot++;
    }
    expect(fastGot).toBe(20);
    expect(fanout.size).toBe(1);
    // The slow one gets what was queued before its limit, then the end of its stream.
    let chunks = 0;
    for (;;) {
      const { done } = await slow.read();
      if (done) break;
      chunks++;
    }
    expect(chunks).toBeLessThan(10);
    await fast.cancel();
  });

  it('writes data of several lines as several data lines, and refuses a line break in an event name', () => {
    expect(message('graph', 'a\nb\r\nc')).toBe('event: graph\ndata: a\ndata: b\ndata: c\n\n');
    expect(() => message('gra\nph', '{}')).toThrow(/line break/);
  });
});
