import type { ConfineSetting } from '../project/config.js';
import { BWRAP_HARNESSES, probeBwrap } from '../sessions/confine/confine.js';

/**
 * `trellis doctor`'s confinement checks (issue 45): whether bubblewrap is here and can start a sandbox
 * like a session's, each problem with its repair, and which harnesses it does not confine.
 */
export async function checkConfinement(setting: ConfineSetting, harness: string | null, env: NodeJS.ProcessEnv, add: (level: 'ok' | 'warn' | 'error', what: string, repair?: string) => void): Promise<void> {
  if (setting === 'off') {
    add('warn', 'sessions.confine is "off": every session runs unconfined, with your user\'s rights over your files, keys and Trellis home', 'remove "confine": "off" from "sessions" in trellis.json (or trellis.local.json) to confine sessions with bubblewrap');
    return;
  }
  const probe = await probeBwrap(env);
  const harnesses = [...BWRAP_HARNESSES].join(', ');
  if (probe.ok) add('ok', `bubblewrap ${probe.version} (${probe.path}) starts a session's sandbox: ${harnesses} sessions run confined`);
  else add('error', `${probe.problem}: spawning a ${harnesses} session is refused`, probe.repair);
  if (harness && !BWRAP_HARNESSES.has(harness)) {
    add('warn', `the project's harness ${harness} runs unconfined: Trellis does not confine it yet (only ${harnesses})`, `spawn untrusted work with a harness Trellis confines (--harness ${[...BWRAP_HARNESSES].join(', --harness ')})`);
  }
}
