import { chmodSync, mkdirSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { createServer } from 'node:http';
import { join, relative } from 'node:path';
import { hookSignalListener, type HookRequest } from '../store/sessions/agents/hook-http.js';
import { hooksDir } from '../store/sessions/verbs/hook-socket.js';
import type { Project } from '../store/compose/open-project.js';
import { recordSignalText } from './relayed-signal.js';

/*
 * A session's hook recorder (issue 40): its command hooks' signals recorded in a process that already runs
 * beside the session (its screen watcher, `trellis session watch-screen`), so an agent's hook starts no Node
 * process of its own. It listens on `<gitdir>/trellis/hooks/<id>` (hook-socket.ts: the folder is 0700, the
 * socket 0600) and speaks HTTP: `POST /signal/<id>/<event>` with the hook's JSON as its body, and the hook's
 * TMUX and TMUX_PANE in `X-Trellis-Tmux` and `X-Trellis-Pane`. Each is recorded as the command hook records it
 * (relayed-signal.ts `recordSignalText`: the same decisions, the same ignored-payload log, the same reaction),
 * one at a time in arrival order, always for this recorder's own session whatever the request names (as a
 * confined session's relay does). The answer: 200 recorded or ignored, 422 refused; its body is what the
 * command hook would have said on stderr.
 */

/** A running recorder. */
export interface HookRecorder {
  /** Stops listening (its socket is removed while it is still this recorder's) once the signals under way are recorded. */
  close(): Promise<void>;
}

/** The longest socket path bound as is; a longer one is bound relative to the hooks folder (sun_path holds 108 bytes). */
const SUN_PATH_MAX = 100;

/**
 * Starts session `id`'s hook recorder in this process, or null when its socket cannot be made (the hook
 * then runs the node hook, as with no recorder). A newer recorder of the same session (a resume's watcher)
 * takes the socket's name over: each binds a name of its own and renames it into place.
 */
export async function startHookRecorder(p: Project, id: string, cwd: string, bin: string): Promise<HookRecorder | null> {
  const dir = hooksDir(p.gitdir);
  const path = join(dir, id);
  const own = `${path}.${process.pid}`;
  let chain: Promise<unknown> = Promise.resolve();
  // One at a time, in the order the hooks came: as the node hooks they replace, each is a compare-and-swap append.
  const record = ({ event, text, env }: HookRequest, say: (line: string) => void): Promise<number> => {
    const done = chain.then(() => recordSignalText(() => p, id, event, text, { cwd, bin, env, say }));
    chain = done.catch(() => {});
    return done;
  };
  const server = createServer(hookSignalListener(`session ${id}'s recorder`, record));
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
    try {
      unlinkSync(own);
    } catch {
      // None left by an earlier process of this pid.
    }
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      if (own.length <= SUN_PATH_MAX) server.listen(own, resolve);
      else {
        // Bound (synchronously, by listen) from inside the folder, by a short relative name.
        const back = process.cwd();
        process.chdir(dir);
        try {
          server.listen(relative(dir, own), resolve);
        } finally {
          process.chdir(back);
        }
      }
    });
    chmodSync(own, 0o600);
    renameSync(own, path);
  } catch (err) {
    if (process.env.TRELLIS_DEBUG) console.error(`trellis: session ${id}'s hook recorder: ${(err as Error).message}`);
    server.close();
    return null;
  }
  const socketIno = statSync(path).ino;
  return {
    close: async () => {
      // Its name, unless a newer recorder's socket has it now.
      try {
        if (statSync(path).ino === socketIno) unlinkSync(path);
      } catch {
        // Gone already.
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await chain;
    },
  };
}
