import { defineConfig } from 'vitest/config';

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
    // Agent sessions run "$SHELL -l": a plain POSIX shell keeps the tests free of the machine's login rc
    // files (a version manager's rehash in ~/.bashrc can block a login shell for a minute behind a stale lock).
    env: { SHELL: '/bin/sh' },
    reporters: ['default', './test/plain-summary-reporter.ts'],
  },
});
