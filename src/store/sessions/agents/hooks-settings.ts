import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { excludeFromGit } from '../worktrees/git-exclude.js';

/**
 * Writes an agent's hook subscriptions into its JSON settings file in the worktree (Claude Code's
 * `.claude/settings.local.json`, Gemini CLI's `.gemini/settings.json`, the same `hooks` shape): every
 * other setting the file holds is kept, `hooks[event]` is ours for each event, and the file is kept out
 * of git. The same content is never written again (Claude Code reloads, and fires ConfigChange, on
 * every write).
 */
export async function installHooksSettings(worktree: string, file: string, events: readonly string[], hook: (event: string) => unknown): Promise<void> {
  const path = join(worktree, file);
  let before: string | null = null;
  let settings: Record<string, unknown> = {};
  try {
    before = await readFile(path, 'utf8');
    const raw = JSON.parse(before) as unknown;
    if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) settings = raw as Record<string, unknown>;
  } catch {
    // Absent or unreadable: ours is the whole file.
  }
  const hooks = typeof settings.hooks === 'object' && settings.hooks !== null ? { ...(settings.hooks as Record<string, unknown>) } : {};
  for (const event of events) hooks[event] = [{ hooks: [hook(event)] }];
  await excludeFromGit(worktree, file);
  const text = `${JSON.stringify({ ...settings, hooks }, null, 2)}\n`;
  if (text === before) return;
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
}
