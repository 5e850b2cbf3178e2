import { existsSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import config from '../vitest.config.js';
import SlowestFirstSequencer, { isRealAgentFile, KNOWN_SLOW, plannedOrder, UNLISTED_MS } from './slowest-first.js';
import { ROOT } from './helpers/repo.js';

const allTestFiles = (dir: string): string[] =>
  readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.test.ts'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)))
    .sort();

/** Replays `order` on two workers the way vitest's queue serves them, each file taking its listed time (or `rest` ms). */
function replay(order: readonly string[], rest = 0) {
  const times = new Map(KNOWN_SLOW);
  const lanes = [{ free: 0, runs: [] as { file: string; from: number; to: number }[] }, { free: 0, runs: [] as { file: string; from: number; to: number }[] }];
  for (const file of order) {
    const lane = lanes[0]!.free <= lanes[1]!.free ? lanes[0]! : lanes[1]!;
    const to = lane.free + (times.get(file) ?? rest);
    lane.runs.push({ file, from: lane.free, to });
    lane.free = to;
  }
  return lanes;
}

describe('the suite’s file order (test/slowest-first.ts)', () => {
  it('lists only files that exist, heaviest first, and is the sequencer vitest.config.ts runs', () => {
    expect(KNOWN_SLOW.map(([f]) => f).filter((f) => !existsSync(join(ROOT, f)))).toEqual([]);
    const times = KNOWN_SLOW.map(([, ms]) => ms);
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(new Set(KNOWN_SLOW.map(([f]) => f)).size).toBe(KNOWN_SLOW.length);
    expect(config.test?.sequence?.sequencer).toBe(SlowestFirstSequencer);
  });

  it('hands out every file once, the longest first; on the listed times the real-agent files never overlap and both workers end within one unlisted file of each other, at half the total', () => {
    const files = [...allTestFiles('src'), ...allTestFiles('test')];
    const order = plannedOrder(files);
    expect([...order].sort()).toEqual([...files].sort());
    expect(order.slice(0, 4)).toEqual(['test/sessions-real-claude.test.ts', 'test/supervisor.test.ts', 'test/sync.test.ts', 'test/security-door.test.ts']);
    const lanes = replay(order, UNLISTED_MS);
    const agentRuns = lanes.flatMap((l) => l.runs).filter((r) => isRealAgentFile(r.file));
    expect(agentRuns.map((r) => r.file)).toEqual(expect.arrayContaining(KNOWN_SLOW.map(([f]) => f).filter(isRealAgentFile)));
    const overlapping = agentRuns.flatMap((a) => agentRuns.filter((b) => a !== b && a.from < b.to && b.from < a.to).map((b) => `${a.file} with ${b.file}`));
    expect(overlapping).toEqual([]);
    const total = files.reduce((sum, f) => sum + (new Map(KNOWN_SLOW).get(f) ?? UNLISTED_MS), 0);
    expect(Math.abs(lanes[0]!.free - lanes[1]!.free)).toBeLessThanOrEqual(UNLISTED_MS);
    expect(Math.max(lanes[0]!.free, lanes[1]!.free)).toBeLessThanOrEqual(total / 2 + UNLISTED_MS);
  });
});
