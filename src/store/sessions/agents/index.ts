import { TrellisError } from '../../../events/index.js';
import type { HarnessAdapter } from './adapter.js';
import { claudeAdapter } from './claude/claude.js';
import { codexAdapter } from './codex/codex.js';
import { geminiAdapter } from './gemini/gemini.js';
import { opencodeAdapter } from './opencode/opencode.js';
import { shellAdapter } from './shell/shell.js';

const ADAPTERS: ReadonlyMap<string, HarnessAdapter> = new Map([shellAdapter, claudeAdapter, codexAdapter, opencodeAdapter, geminiAdapter].map((a) => [a.name, a]));

/** The harnesses a session can run. */
export const harnessNames = (): string[] => [...ADAPTERS.keys()];

/** The adapter of `name`; an unknown harness is refused, naming the ones there are. */
export function adapterOf(name: string): HarnessAdapter {
  const adapter = ADAPTERS.get(name);
  if (!adapter) throw new TrellisError('UNKNOWN_HARNESS', `unknown harness '${name}': use one of ${harnessNames().join(', ')}`);
  return adapter;
}
