import type { SetupScreen } from '../adapter.js';

/** Codex's first-run screens, as the real program draws them (checked against 0.169.0 and 0.171.0). */
export const CODEX_FIRST_RUN: readonly SetupScreen[] = [
  { match: [/Sign in with ChatGPT/], detail: 'login: Codex is not logged in ("Sign in with ChatGPT")' },
  { match: [/Folder access/, /Trust this folder\?/], detail: 'folder access: Codex asks whether to trust this folder ("1. Trust and continue")' },
  { match: [/Hooks need review/], detail: 'hooks review: Codex asks to review new hooks ("Hooks need review")' },
];
