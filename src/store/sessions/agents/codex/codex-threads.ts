import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { codexHome } from './preflight-codex.js';

/**
 * Whether Codex saved a conversation with this thread id: its rollout file
 * (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread-id>.jsonl`, checked against 0.169.0). Only a
 * saved conversation is one `codex resume <id>` can continue; Codex's title-generation side thread is
 * never saved. Read from the environment of the notify that asks (Codex's own).
 */
export function codexThreadSaved(threadId: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const suffix = `-${threadId}.jsonl`;
  const found = (dir: string, depth: number): boolean => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return false;
    }
    // Newest dates first: the conversation asking is almost always today's.
    for (const e of entries.sort((a, b) => (a.name < b.name ? 1 : -1))) {
      if (depth === 0 && e.isFile() && e.name.startsWith('rollout-') && e.name.endsWith(suffix)) return true;
      if (depth > 0 && e.isDirectory() && found(join(dir, e.name), depth - 1)) return true;
    }
    return false;
  };
  return found(join(codexHome(env), 'sessions'), 3);
}
