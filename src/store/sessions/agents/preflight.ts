import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { TrellisError } from '../../../events/index.js';
import { adapterOf, harnessNames } from './index.js';
import type { PreflightContext } from './preflight-context.js';

/** The agent program a harness runs and how to install it (its adapter says), or undefined. */
const programOf = (harness: string) => (harnessNames().includes(harness) ? adapterOf(harness).program : undefined);

export type { PreflightContext } from './preflight-context.js';

/** The program a harness's agent runs, or null for a harness that runs none (`shell`). */
export const agentProgram = (harness: string): string | null => programOf(harness)?.program ?? null;

/**
 * Before a spawn: refuses a harness whose agent program is not on PATH (naming it and how to install it),
 * then reads the agent's own config for what its first run will ask (onboarding, folder trust, login)
 * and answers each as a warning with its exact repair. A session spawned anyway waits in
 * `awaiting{setup}` on that dialog; the warnings say so up front.
 */
export async function preflight(harness: string, ctx: PreflightContext): Promise<string[]> {
  const agent = programOf(harness);
  if (!agent) return [];
  const path = which(agent.program, ctx.env.PATH ?? '');
  if (!path) {
    throw new TrellisError(
      'HARNESS_NOT_INSTALLED',
      `the ${harness} harness runs '${agent.program}', which is not installed here (not on PATH): install it with '${agent.install}', or spawn with --harness shell`,
      { details: { harness, program: agent.program } },
    );
  }
  return (await adapterOf(harness).preflight?.(ctx, path)) ?? [];
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
