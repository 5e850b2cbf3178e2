import type { SessionCommand } from '../../../events/index.js';
import { Tmux } from '../tmux/tmux.js';

/*
 * How the runtime reaches its processes, apart from what it does with them (runtime.ts: launch, delivery,
 * worktrees): an agent's hook (`trellis session signal`) needs the tmux socket and nothing it launches.
 */

/** How the runtime reaches its processes: the tmux server, the API url sessions get, the environment. */
export interface SessionRuntime {
  readonly tmux: Tmux;
  /** The supervisor's loopback face for `TRELLIS_API_URL`, or null (no serve online). */
  apiUrl(): Promise<string | null>;
  readonly env: NodeJS.ProcessEnv;
}

export function defaultRuntime(env: NodeJS.ProcessEnv = process.env, apiUrl: () => Promise<string | null> = async () => env.TRELLIS_API_URL || null): SessionRuntime {
  return { tmux: Tmux.forHome(env), apiUrl, env };
}

/** A session command without who, when and source (distributed over the union). */
export type BareCommand = SessionCommand extends infer C ? (C extends unknown ? Omit<C, 'by' | 'at' | 'source'> : never) : never;
