import { harnessNames } from './index.js';
import { agentProgram, which } from './preflight.js';

/**
 * `harness: "auto"` in trellis.json (the bundled demo says it): the first agent installed where the
 * sessions run — claude, then codex, then opencode, then gemini, each found on the server's PATH — else `shell`. It is
 * resolved at each spawn, never written back, so the same project picks up an agent installed later.
 */
export const AUTO_HARNESS = 'auto';

/** One harness the spawn form offers, and whether its agent program is on PATH (shell always is). */
export interface HarnessOption {
  readonly name: string;
  readonly installed: boolean;
}

/** What "project default" means here: as configured, as resolved, and the harnesses to pick from. */
export interface HarnessMenu {
  /** trellis.json's `harness` (null when it names none: then the default is `shell`). */
  readonly configured: string | null;
  /** The harness a spawn without one runs. */
  readonly resolved: string;
  /** Whether `resolved` can start here; when not, a spawn with the default fails. */
  readonly installed: boolean;
  readonly harnesses: readonly HarnessOption[];
}

const installed = (name: string, env: NodeJS.ProcessEnv): boolean => {
  const program = agentProgram(name);
  return program === null || which(program, env.PATH ?? '') !== null;
};

/** The harness `configured` means on this machine: `auto` (or nothing) resolved, any other name as it is. */
export function resolveHarness(configured: string | null | undefined, env: NodeJS.ProcessEnv): string {
  if (configured && configured !== AUTO_HARNESS) return configured;
  if (!configured) return 'shell';
  return harnessNames().find((h) => agentProgram(h) !== null && installed(h, env)) ?? 'shell';
}

/** The spawn form's menu: the default as resolved, and every harness with whether it is installed. */
export function harnessMenu(configured: string | null, env: NodeJS.ProcessEnv): HarnessMenu {
  const resolved = resolveHarness(configured, env);
  const harnesses = harnessNames().map((name) => ({ name, installed: installed(name, env) }));
  return { configured, resolved, installed: harnesses.find((h) => h.name === resolved)?.installed ?? false, harnesses };
}
