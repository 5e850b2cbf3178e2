/**
 * One adapter, loaded when asked for (issue 40): the command hook, which runs for every agent event with no
 * serve, loads the adapter of its own session's agent and no other. index.ts's `adapterOf` (every adapter,
 * loaded up front) stays for the session verbs, which may meet any of them; both list the same harnesses in
 * the same order (load-adapter.test.ts).
 */
import { TrellisError } from '../../../events/index.js';
import type { HarnessAdapter } from './adapter.js';

const LOADERS: Readonly<Record<string, () => Promise<HarnessAdapter>>> = {
  shell: async () => (await import('./shell/shell.js')).shellAdapter,
  claude: async () => (await import('./claude/claude.js')).claudeAdapter,
  codex: async () => (await import('./codex/codex.js')).codexAdapter,
  opencode: async () => (await import('./opencode/opencode.js')).opencodeAdapter,
  gemini: async () => (await import('./gemini/gemini.js')).geminiAdapter,
};

/** The harnesses `loadAdapter` knows. */
export const lazyHarnessNames = (): string[] => Object.keys(LOADERS);

/** The adapter of `name`, loading only its module; an unknown harness is refused as `adapterOf` refuses it. */
export async function loadAdapter(name: string): Promise<HarnessAdapter> {
  const load = Object.hasOwn(LOADERS, name) ? LOADERS[name] : undefined;
  if (!load) throw new TrellisError('UNKNOWN_HARNESS', `unknown harness '${name}': use one of ${lazyHarnessNames().join(', ')}`);
  return load();
}
