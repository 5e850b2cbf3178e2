import { describe, expect, it } from 'vitest';
import { firstRunAsks } from './codex-first-run.js';

// What the real Codex 0.169.0 and 0.171.0 app-servers answered `account/read` and `config/read {cwd}`
// (the same on both), in a fresh CODEX_HOME: auth.json or not, OpenAI's provider or a custom one, the folder trusted or not.
const LOGGED_IN = { account: { type: 'apiKey' }, userId: null, requiresOpenaiAuth: true, workspaceRouting: null };
const NO_LOGIN = { account: null, userId: null, requiresOpenaiAuth: true, workspaceRouting: null };
const CUSTOM_PROVIDER = { account: null, userId: null, requiresOpenaiAuth: false, workspaceRouting: null };
const config = (projects: Record<string, unknown> | null) => ({ config: { model: null, approval_policy: null, sandbox_mode: null, projects }, origins: {} });
const WORK = '/w/.trellis/worktrees/s1';
const MAIN = '/w';

describe("Codex's first run, read over its app-server", () => {
  it.each([
    ['logged in, the main checkout trusted', LOGGED_IN, config({ [MAIN]: { trust_level: 'trusted' } }), null],
    ['logged in, the worktree itself trusted', LOGGED_IN, config({ [WORK]: { trust_level: 'trusted' } }), null],
    ['logged in, the folder told untrusted (asked before: Codex does not ask again)', LOGGED_IN, config({ [MAIN]: { trust_level: 'untrusted' } }), null],
    ['a custom provider with no login', CUSTOM_PROVIDER, config({ [MAIN]: { trust_level: 'trusted' } }), null],
    ['not logged in on OpenAI’s provider', NO_LOGIN, config({ [MAIN]: { trust_level: 'trusted' } }), 'login: Codex is not logged in ("Sign in with ChatGPT")'],
    ['not logged in and untrusted: the login first, as the TUI asks it', NO_LOGIN, config(null), 'login: Codex is not logged in ("Sign in with ChatGPT")'],
    ['no entry for either folder', LOGGED_IN, config(null), `folder access: Codex has not been told whether to trust ${MAIN} ("Trust this folder?")`],
    ['only another folder trusted', LOGGED_IN, config({ '/elsewhere': { trust_level: 'trusted' } }), `folder access: Codex has not been told whether to trust ${MAIN} ("Trust this folder?")`],
  ])('%s', (_what, account, cfg, asks) => {
    expect(firstRunAsks(account, cfg, [WORK, MAIN])).toBe(asks);
  });
});
