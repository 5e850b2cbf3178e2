/*
 * The command hook's shell program (issue 40), shared by the two places that write it: an unconfined
 * session's hooks folder (verbs/hook-socket.ts, its recorder the session's screen watcher) and a confined
 * session's relay folder (confine/confine-agents.ts, its recorder the outer relay). Either way the socket it
 * reaches is named by the session's id beside the program, and the node hook it falls back to is the command
 * line it was given.
 */

/**
 * The command hook, as a POSIX shell program. Its arguments are the node hook's own command line
 * (`<node> <bin.js> session signal <id> <event>`). It prints nothing on stdout (as the node hook without
 * `--json`), says what the recorder said (what it ignored, or why it refused) on stderr, and exits 0 when
 * the signal was recorded or ignored, 1 when it was refused: never 2, which Claude Code reads as "block".
 * The socket is reached by a path relative to the program's folder (a Unix socket's path is at most 107 bytes;
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

