import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { shq } from '../agents/adapter.js';

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
 * The command hook, as a POSIX shell program. Its arguments are the node hook's own command line
 * (`<node> <bin.js> session signal <id> <event>`). It prints nothing on stdout (as the node hook without
 * `--json`), says what the recorder said (what it ignored, or why it refused) on stderr, and exits 0 when
 * the signal was recorded or ignored, 1 when it was refused: never 2, which Claude Code reads as "block".
 * The socket is reached by a path relative to the hooks folder (a Unix socket's path is at most 107 bytes;
 * the `cd` is inside the command substitution, so the node hook still starts in the hook's own folder).
 */
export const HOOK_SCRIPT = `# Trellis's command hook (written by each launch; docs/sessions.md, "How a hook reaches Trellis").
# "$@" is the node hook's own command line: <node> <bin.js> session signal <id> <event>.
[ $# -eq 6 ] && [ "$3 $4" = 'session signal' ] || exec "$@"
# Its pane killed as it runs (a close, an interrupt), the hook still delivers its signal (curl and node inherit this).
trap '' HUP
if [ -t 0 ]; then p=; else p=$(cat); fi
if command -v curl >/dev/null 2>&1; then
  # The session's recorder, on the socket named by its id beside this file: its answer, then its HTTP status.
  r=$(cd "\${0%/*}" 2>/dev/null || exit 7
      printf '%s' "$p" | curl -s --unix-socket "./$5" -H 'Content-Type: application/json' \\
        -H "X-Trellis-Tmux: \${TMUX-}" -H "X-Trellis-Pane: \${TMUX_PANE-}" \\
        --data-binary @- -w '%{http_code}' "http://trellis/signal/$5/$6")
  c=$?
  case $c in
    0) s=\${r#"\${r%???}"}; r=\${r%???}
       [ -z "$r" ] || printf '%s' "$r" >&2
       [ "$s" = 200 ] && exit 0
       exit 1 ;;
    # Nothing listens (no socket, or its recorder is gone): the node hook records it, below.
    7) ;;
    *) echo "trellis: session $5: the session's recorder did not answer its $6 signal (curl exit $c)" >&2
       exit 1 ;;
  esac
fi
printf '%s' "$p" | "$@"
`;

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
  if (before !== HOOK_SCRIPT) {
    writeFileSync(`${file}.${process.pid}`, HOOK_SCRIPT, { mode: 0o600 });
    renameSync(`${file}.${process.pid}`, file);
  }
  return `sh ${shq(file)} ${trellis}`;
}
