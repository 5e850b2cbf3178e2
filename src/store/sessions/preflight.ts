import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { TrellisError } from '../../events/index.js';
import { claudePreflight } from './preflight-claude.js';
import type { PreflightContext } from './preflight-context.js';
import { codexPreflight } from './preflight-codex.js';

/** The agent program each harness runs, and how to install it. */
const PROGRAMS: Readonly<Record<string, { readonly program: string; readonly install: string }>> = {
  claude: { program: 'claude', install: 'npm install -g @anthropic-ai/claude-code' },
  codex: { program: 'codex', install: 'npm install -g @openai/codex' },
  opencode: { program: 'opencode', install: 'npm install -g opencode-ai' },
  gemini: { program: 'gemini', install: 'npm install -g @google/gemini-cli' },
};

export type { PreflightContext } from './preflight-context.js';

/** The program a harness's agent runs, or null for a harness that runs none (`shell`). */
export const agentProgram = (harness: string): string | null => PROGRAMS[harness]?.program ?? null;

/**
 * Before a spawn: refuses a harness whose agent program is not on PATH (naming it and how to install it),
 * then reads the agent's own config for what its first run will ask (onboarding, folder trust, login)
 * and answers each as a warning with its exact repair. A session spawned anyway waits in
 * `awaiting{setup}` on that dialog; the warnings say so up front.
 */
export async function preflight(harness: string, ctx: PreflightContext): Promise<string[]> {
  const agent = PROGRAMS[harness];
  if (!agent) return [];
  const path = which(agent.program, ctx.env.PATH ?? '');
  if (!path) {
    throw new TrellisError(
      'HARNESS_NOT_INSTALLED',
      `the ${harness} harness runs '${agent.program}', which is not installed here (not on PATH): install it with '${agent.install}', or spawn with --harness shell`,
      { details: { harness, program: agent.program } },
    );
  }
  if (harness === 'claude') return claudePreflight(ctx);
  // opencode: no first-run check yet (its provider and model come from its own config, not read here).
  return harness === 'codex' ? codexPreflight(ctx, path) : [];
}

/** The first executable file named `program` on `pathVar`, or null. */
export function which(program: string, pathVar: string): string | null {
  for (const dir of pathVar.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, program);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}
