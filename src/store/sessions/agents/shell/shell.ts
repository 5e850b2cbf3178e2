import type { HarnessAdapter } from '../adapter.js';
import { commonGuard } from '../adapter.js';

/**
 * `shell`: a login shell in the worktree. No turn detection: its state stays `running` until the user
 * says otherwise; prompts are typed into it as commands.
 */
export const shellAdapter: HarnessAdapter = {
  name: 'shell',
  events: [],
  ownedPaths: [],
  // Prose typed into a shell runs as commands; typed input waits in the terminal while a command runs.
  readsProse: false,
  queuesInput: true,
  command: () => `exec "\${SHELL:-/bin/sh}" -l`,
  install: async () => {},
  signal: () => [],
  guard: commonGuard,
};
