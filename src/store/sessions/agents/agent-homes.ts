import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Codex's home: `CODEX_HOME`, else `~/.codex`. Out of codex's folder because the command hook's usage read
 * needs it for a Codex session without loading Codex's adapter for every other agent's event (issue 40).
 */
export const codexHome = (env: NodeJS.ProcessEnv): string => env.CODEX_HOME || join(env.HOME || homedir(), '.codex');
