import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseThreadEvent, type RecordedEvent } from '../events/index.js';
import { evalRemarkThreads, foldThreads, localIssues, mergeIssues } from './issue-list.js';
import { freshness, threadFreshness } from './freshness.js';
import { nodeSlice } from './node-slice.js';

const fixture = (name: string) => new URL(`../../fixtures/events/${name}`, import.meta.url);

/** Reads a recorded NDJSON log, validating each event the way the store validates bytes from git. */
function readLog(name: string): RecordedEvent[] {
  return readFileSync(fixture(name), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line, i) => {
      const { stream, event } = JSON.parse(line) as { stream: string; event: unknown };
      const parsed = parseThreadEvent(JSON.stringify(event));
      if (!parsed.ok) throw new Error(`line ${i + 1}: ${parsed.reason}`);
      return { stream, event: parsed.event };
    });
}

function views(log: RecordedEvent[]) {
  const threads = [...foldThreads(log).values()];
  const issues = mergeIssues(localIssues(threads));
  return {
    issues,
    evalRemarks: evalRemarkThreads(threads).map((t) => t.id),
    nodes: nodeSlice(issues),
    freshness: freshness(threads.filter((t) => !t.scope).map(threadFreshness)),
  };
}

describe('replay of a recorded event log', () => {
  const log = readLog('threads.ndjson');

  it('folds into the recorded expected views', () => {
    const expected = JSON.parse(readFileSync(fixture('threads.expected.json'), 'utf8'));
    expect(views(log)).toEqual(expected);
  });

  it('replaying the whole log twice changes nothing (merges can deliver events again)', () => {
    expect(views([...log, ...log])).toEqual(views(log));
  });

  it('interleaving streams differently changes nothing', () => {
    const byStream = [...log].sort((a, b) => (a.stream < b.stream ? -1 : a.stream > b.stream ? 1 : 0));
    expect(views(byStream)).toEqual(views(log));
  });
});
