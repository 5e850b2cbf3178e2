import { chmodSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { shq } from '../agents/adapter.js';
import { HOOK_SCRIPT } from '../agents/hook-program.js';
import { writeAtomicSync } from '../../write-atomic.js';

/*
 * How an agent's command hook reaches Trellis without starting Node (issue 40: the hook's CPU per event; a
 * Node process alone costs more than the 60 ms it may). A session's long-lived recorder (its own screen
 * watcher, `trellis session watch-screen`) listens on a Unix socket named by the session's id in the
 * project's hooks folder, `<gitdir>/trellis/hooks/` (0700: the user's alone). The hook the launch writes
 * into the agent's settings is `sh <hooks>/signal.sh <node> <bin.js> session signal <id> <event>`: the shell
 * program below reads the hook's JSON once and POSTs it with curl to that socket; only when nothing could
 * be reached (no curl, no socket or none listening: curl's exit 7) does it run the node hook it was given,
 * with the same JSON. Any other failure is said and exits 1, never a second recording.
 */

/** The folder of a project's hook sockets and its hook program. */
export const hooksDir = (gitdir: string): string => join(gitdir, 'trellis', 'hooks');

/** The hook program's file name in the hooks folder. */
const SCRIPT = 'signal.sh';

/**
 * The hooks folder made (0700) with the hook program written in it (only when its text changed, by a
 * rename: a hook of another session may be reading it), and the command line an agent's hook runs in
 * front of `trellis` (`sh '<hooks>/signal.sh' '<node>' '<bin.js>'`, then `session signal <id> <event>`).
 */
export function installHookScript(gitdir: string, trellis: string): string {
  const dir = hooksDir(gitdir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const file = join(dir, SCRIPT);
  let before: string | null = null;
  try {
    before = readFileSync(file, 'utf8');
  } catch {
    // Not written yet.
  }
  if (before !== HOOK_SCRIPT) writeAtomicSync(file, HOOK_SCRIPT, { mode: 0o600 });
  return `sh ${shq(file)} ${trellis}`;
}
