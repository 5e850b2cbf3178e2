import { defineConfig } from 'vitest/config';
import SlowestFirstSequencer from './test/slowest-first.js';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
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
