/**
 * Text from users, agents and forges reaches the terminal only through here. A control character in an
 * issue's concern, a reply, a node title or a session name would otherwise be obeyed by the terminal:
 * an ESC sequence recolours or rewrites the screen, sets the window title, or (on some terminals)
 * answers back into the input. Every C0 control but newline and tab (which the layout itself uses), DEL
 * and every C1 control are shown as a visible escape (`\x1b`, `\r`, `\u009b`) instead. Machine output
 * (`--json`, NDJSON, `graph`, `capture --ansi`) never comes here: it stays byte for byte.
 */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

const NAMED: Readonly<Record<string, string>> = { '\r': '\\r', '\b': '\\b', '\f': '\\f', '\v': '\\v', '\0': '\\0' };

const visible = (ch: string): string => {
  const code = ch.charCodeAt(0);
  return NAMED[ch] ?? (code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`);
};

/** `text` with every control character a terminal would act on shown as a visible escape instead. */
export const terminalText = (text: string): string => text.replace(CONTROL, visible);
