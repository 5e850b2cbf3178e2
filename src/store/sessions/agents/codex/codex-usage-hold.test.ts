import { afterEach, describe, expect, it, vi } from 'vitest';
import { UsageHold } from './codex-usage-hold.js';

/*
 * Codex's token-usage update is recorded by the next signal's append when one follows within the hold
 * (turn/completed comes 23 ms after it in the recording), else on its own once the hold is up.
 */
afterEach(() => vi.useRealTimers());

describe('a held token-usage update', () => {
  it('is carried by the next signal: nothing recorded on its own, counted as carried', () => {
    vi.useFakeTimers();
    const recorded: unknown[] = [];
    const hold = new UsageHold(750, (p) => recorded.push(p));
    hold.hold({ n: 1 });
    vi.advanceTimersByTime(23);
    hold.carry();
    vi.advanceTimersByTime(5_000);
    expect(recorded).toEqual([]);
    expect(hold.carried).toBe(1);
    // A signal with nothing held carries nothing.
    hold.carry();
    expect(hold.carried).toBe(1);
  });

  it('is recorded on its own once the hold is up, once for several updates meanwhile (the last)', () => {
    vi.useFakeTimers();
    const recorded: unknown[] = [];
    const hold = new UsageHold(750, (p) => recorded.push(p));
    hold.hold({ n: 1 });
    vi.advanceTimersByTime(400);
    hold.hold({ n: 2 });
    vi.advanceTimersByTime(349);
    expect(recorded).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(recorded).toEqual([{ n: 2 }]);
    expect(hold.carried).toBe(0);
    vi.advanceTimersByTime(5_000);
    expect(recorded).toHaveLength(1);
  });

  it('is recorded at once when the watcher ends (release), and not again', () => {
    vi.useFakeTimers();
    const recorded: unknown[] = [];
    const hold = new UsageHold(750, (p) => recorded.push(p));
    hold.release();
    expect(recorded).toEqual([]);
    hold.hold({ n: 1 });
    hold.release();
    vi.advanceTimersByTime(5_000);
    expect(recorded).toEqual([{ n: 1 }]);
  });
});
