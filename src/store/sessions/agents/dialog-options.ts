/**
 * The options of a terminal selection dialog as the agents draw them (Claude Code's permission, trust and
 * question dialogs, Codex's approvals): one option per line, the selected one marked `❯` (or `›`), the
 * others indented to the same column, each perhaps numbered (`1. Yes`). Lines indented deeper are an
 * option's description; a blank or less indented line ends the list.
 */
export interface DialogOptions {
  /** Each option's text as shown, without its number. */
  readonly options: readonly string[];
  /** Index of the selected option. */
  readonly selected: number;
}

const MARK = /^(\s*)[❯›>]\s(\s*)(\S.*)$/;
/** Inside a box (Gemini CLI's dialogs, `│ ● 1. Allow once │`) the selected option is marked `●`. */
const BOXED_MARK = /^(\s*)●\s(\s*)(\S.*)$/;
const BOX = /^\s*│(.*?)│\s*$/;

/** The last selection list on `screen` (a pane's plain text), or null when none is shown. */
export function dialogOptions(screen: string): DialogOptions | null {
  // A box's borders are not text: its lines are read without them (a `●` marks a choice only there).
  const raw = screen.split('\n');
  const boxed = raw.map((l) => BOX.test(l));
  const lines = raw.map((l) => BOX.exec(l)?.[1]?.trimEnd() ?? l);
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = MARK.exec(lines[i]!) ?? (boxed[i] ? BOXED_MARK.exec(lines[i]!) : null);
    if (!m) continue;
    // The input box's prompt (`❯` between two rules) is not a dialog option.
    if (/^─{10,}/.test(lines[i - 1] ?? '') && /^─{10,}/.test(lines[i + 1] ?? '')) continue;
    const col = m[1]!.length + 2 + m[2]!.length;
    const isOption = (line: string) => line.length > col && line.slice(0, col).trim() === '' && line[col] !== ' ';
    const deeper = (line: string) => line.length > col && line.slice(0, col + 1).trim() === '';
    let first = i;
    for (let j = i - 1; j >= 0 && (isOption(lines[j]!) || deeper(lines[j]!)); j--) if (isOption(lines[j]!)) first = j;
    let last = i;
    for (let j = i + 1; j < lines.length && (isOption(lines[j]!) || deeper(lines[j]!)); j++) if (isOption(lines[j]!)) last = j;
    const options: string[] = [];
    let selected = 0;
    for (let j = first; j <= last; j++) {
      const line = j === i ? `${' '.repeat(col)}${m[3]}` : lines[j]!;
      if (!isOption(line)) continue;
      if (j === i) selected = options.length;
      options.push(line.slice(col).trim().replace(/^\d+\.\s+/, ''));
    }
    if (options.length < 2) continue;
    return { options, selected };
  }
  return null;
}

/** What people call the usual answers, matched against an option's text (an exact option text always works). */
const NAMED: Readonly<Record<string, RegExp>> = {
  approve: /^Yes(\b|,)|^Allow once\b/i,
  yes: /^Yes(\b|,)|^Allow once\b/i,
  deny: /^No(\b|,)/i,
  no: /^No(\b|,)/i,
  trust: /^Yes, I trust this folder|^(Yes, )?trust/i,
};

/** The index of the option `choice` names (an option's text, or approve/deny/trust), or null. */
export function optionNamed(options: readonly string[], choice: string): number | null {
  const want = choice.trim().toLowerCase();
  const exact = options.findIndex((o) => o.toLowerCase() === want);
  if (exact >= 0) return exact;
  const re = NAMED[want];
  const named = re ? options.findIndex((o) => re.test(o)) : -1;
  return named >= 0 ? named : null;
}

/**
 * Whether an answer (as `answerSession` reports it: an option's text, or `name (Key)` on a keyed dialog)
 * lets the agent's tool go on, and its turn with it: any option of a question (the answer is the tool's
 * result), a permission's every option but a refusal (`No…`). Esc refuses either. After such an answer
 * the turn's end is the agent's own signal; after a refusal the agent stops with no hook.
 */
export function answerGoesOn(reason: string | null, chose: string): boolean {
  if (/\(Escape\)$/.test(chose)) return false;
  if (reason === 'question') return true;
  return reason === 'permission' && !NAMED.deny!.test(chose);
}
