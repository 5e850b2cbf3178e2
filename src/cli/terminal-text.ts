/**
 * Text from users, agents and forges reaches the terminal only through here. A control character in an
 * issue's concern, a reply, a node title or a session name would otherwise be obeyed by the terminal:
 * an ESC sequence recolours or rewrites the screen, sets the window title, or (on some terminals)
 * answers back into the input. Every C0 control but newline and tab (which the layout itself uses), DEL
 * and every C1 control are shown as a visible escape (`\x1b`, `\r`, `\u009b`) instead. So are the
 * invisible formatting characters that make text read otherwise than it is (Trojan Source): the bidi
 * embeddings, overrides and isolates (U+202A–202E, U+2066–2069, U+061C), the zero-width and direction
 * marks (U+200B–200F), the word joiner and invisible operators (U+2060–2064), U+FEFF, the soft hyphen
 * and the interlinear annotation marks (U+FFF9–FFFB) — except a zero-width joiner inside an emoji
 * sequence, which only draws the emoji. Machine output (`--json`, NDJSON, `graph`, `capture --ansi`)
 * never comes here: it stays byte for byte.
 */
const CONTROL =
  // eslint-disable-next-line no-control-regex, no-misleading-character-class
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b\u200c\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\ufff9-\ufffb]|(?<![\p{Extended_Pictographic}\u{1F3FB}-\u{1F3FF}\ufe0f])\u200d|\u200d(?!\p{Extended_Pictographic})/gu;

const NAMED: Readonly<Record<string, string>> = { '\r': '\\r', '\b': '\\b', '\f': '\\f', '\v': '\\v', '\0': '\\0' };

const visible = (ch: string): string => {
  const code = ch.charCodeAt(0);
  return NAMED[ch] ?? (code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`);
};

/** `text` with every control character a terminal would act on shown as a visible escape instead. */
export const terminalText = (text: string): string => text.replace(CONTROL, visible);
