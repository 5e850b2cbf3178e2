import type { AppServerClient } from './codex-app-server.js';

const obj = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/**
 * What Codex's own first run would ask before a session's work, from what its app-server says (checked
 * against 0.169.0 and 0.171.0): a login — `account/read` answers `{account: null, requiresOpenaiAuth: true}`
 * on OpenAI's provider with nothing signed in (a custom provider answers `requiresOpenaiAuth: false`) —,
 * and folder access — `config/read {cwd}` lists no `projects` entry (trusted or not) for the worktree or
 * the main checkout. Over its app-server Codex asks neither: a turn without a login retries for minutes,
 * and an untrusted folder is not asked about. Only its own TUI asks them, so the watcher hands such a
 * launch to the notify path, whose pane shows the screen (read as `awaiting{setup}`, CODEX_FIRST_RUN's
 * words) for the person to answer: Trellis answers neither and writes nothing to Codex's config.
 * Returns the words of what it would ask, or null.
 */
export function firstRunAsks(account: unknown, config: unknown, dirs: readonly string[]): string | null {
  const a = obj(account);
  if (a.account == null && a.requiresOpenaiAuth === true) return 'login: Codex is not logged in ("Sign in with ChatGPT")';
  const projects = obj(obj(obj(config).config).projects);
  if (!dirs.some((d) => Object.hasOwn(projects, d))) return `folder access: Codex has not been told whether to trust ${dirs.at(-1) ?? 'this folder'} ("Trust this folder?")`;
  return null;
}

/** Asks the server what its first run would ask in `cwd` (see firstRunAsks); `mainRoot` is the checkout a worktree belongs to. */
export async function askFirstRun(client: AppServerClient, cwd: string, mainRoot: string): Promise<string | null> {
  const [account, config] = await Promise.all([client.request('account/read', {}), client.request('config/read', { cwd })]);
  return firstRunAsks(account, config, [cwd, mainRoot]);
}
