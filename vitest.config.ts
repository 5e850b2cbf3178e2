import { defineConfig } from 'vitest/config';
import SlowestFirstSequencer from './test/slowest-first.js';

/**
 * Files that run in one shared worker process per lane instead of a fresh process each (vitest's `isolate:
 * false`): the unit tests under src/, and the test/ files that touch no process-wide state (no environment
 * written, no mock, no fake timer, no chdir: test/suite-config.test.ts checks that of each). A fresh process per
 * file cost each of them a Node start-up and a new import of the source they test, about 0.3 s of CPU a file:
 * measured side by side, the 80 src/ files took 42 s of CPU isolated and 19 s shared, the 26 test/ files
 * 72 s and 55 s. The suite is CPU-bound on the 2-core CI machine, so that CPU was the other lane's time too.
 */
export const SHARED_PROCESS_FILES: readonly string[] = [
  'src/**/*.test.ts',
  'test/architecture.test.ts',
  'test/cli-bundle.test.ts',
  'test/cost-http.test.ts',
  'test/cost-one-append.test.ts',
  'test/door-lows.test.ts',
  'test/door-paths.test.ts',
  'test/door-scopes.test.ts',
  'test/eval-predates.test.ts',
  'test/forge/driver-contract.test.ts',
  'test/forge/forge-shapes.test.ts',
  'test/forge/recorded-shapes.test.ts',
  'test/http-api.test.ts',
  'test/http-fuzz.test.ts',
  'test/import-graph.test.ts',
  'test/layers.test.ts',
  'test/notify-push.test.ts',
  'test/overlay-live.test.ts',
  'test/pane-fanout.test.ts',
  'test/pipe.test.ts',
  'test/route-table.test.ts',
  'test/sessions-queue-lock.test.ts',
  'test/slowest-first.test.ts',
  'test/suite-config.test.ts',
  'test/sse-fanout.test.ts',
  'test/switchable-proxy.test.ts',
  'test/terminal-escape.test.ts',
];

export default defineConfig({
  test: {
    projects: [
      { extends: true, test: { name: 'shared', include: [...SHARED_PROCESS_FILES], isolate: false } },
      { extends: true, test: { name: 'isolated', include: ['test/**/*.test.ts'], exclude: [...SHARED_PROCESS_FILES] } },
    ],
    // Integration tests spawn real git and CLI processes; 2 cores is the target machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // expect.poll's own default (1 s) is shorter than one CLI run or one page fetch on a loaded 2-core CI
    // machine: a poll that gives no timeout of its own waits as long as the waitFor helpers do.
    expect: { poll: { timeout: 15_000 } },
    pool: 'forks',
    // Two files at a time on the 2-core target: most of a test's time is spent waiting on the processes it
    // starts (git, tmux, agents, Chromium), so a second file fills that wait. Measured on one clean checkout,
    // nothing else running: 1,492 tests in 685 s with 2 workers against 931 s for 1,438 with vitest's default
    // of one (cores − 1) on CI. Tests synchronize on conditions with deadlines, never on timing, so two at
    // once stay deterministic.
    maxWorkers: 2,
    // The longest files first (a checked-in list: a clean CI clone has no cache of the last run's times),
    // the real-agent files one after another on one worker while the other takes the rest, so both workers
    // end together: test/slowest-first.ts.
    sequence: { sequencer: SlowestFirstSequencer },
    // Agent sessions run "$SHELL -l": a plain POSIX shell keeps the tests free of the machine's login rc
    // files (a version manager's rehash in ~/.bashrc can block a login shell for a minute behind a stale lock).
    env: { SHELL: '/bin/sh' },
    reporters: ['default', './test/plain-summary-reporter.ts'],
  },
});
