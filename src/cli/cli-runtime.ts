import type { ProjectContext } from '../store/project/context.js';
import { defaultRuntime, type SessionRuntime } from '../store/sessions/log/session-runtime.js';
import { mainRoot } from '../store/sessions/worktrees/worktree.js';
import { trellisHome } from '../store/trellis-home.js';

/**
 * The runtime of a CLI verb. Sessions it launches get the online serve's url (from its endpoint record,
 * verified live); with no serve online, none: adapters signal through `trellis session signal`. The record
 * is read only when a launch asks (the command hook, which launches nothing, never loads its reader).
 */
export function cliRuntime(p: ProjectContext): SessionRuntime {
  let url: Promise<string | null> | undefined;
  return defaultRuntime(process.env, () =>
    (url ??= import('../store/host/online-verdict.js')
      .then(({ readEndpointRecord }) => readEndpointRecord(trellisHome(), mainRoot(p), { timeoutMs: 1_000 }))
      .then((v) => (v.online ? v.record.url : null), () => null)),
  );
}
