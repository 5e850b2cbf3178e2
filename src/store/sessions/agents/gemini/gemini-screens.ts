/**
 * Gemini CLI's screens as 0.61.0 draws them (captured in test/agents/recordings/gemini-0.61.0-screen-*.txt):
 * its dialogs sit in a box (`│ … │`), the selected option marked `●`; its input box is a `>` line
 * under a rule, its placeholder "Type your message or @path/to/file"; a turn under way shows
 * "(esc to cancel". Read from the pane where no hook speaks: a denied permission and Esc mid-turn fire
 * no hook at all.
 */

import type { SetupScreen } from '../adapter.js';

const PLACEHOLDER = /^Type your message or @path\/to\/file\s*$/;
const strip = (s: string) => s.replace(/\x1b\[[0-9;:?]*[A-Za-z]/g, '');

/** A permission dialog on screen ("Allow execution of [Shell]?"), or null. */
export function geminiDialogOnScreen(screen: string): { readonly reason: 'permission'; readonly detail: string } | null {
  const ask = /Allow execution of \[([^\]]+)\]\?/.exec(screen);
  if (!ask) return null;
  // The call it asks about: the `? <Tool>  <what>` header line of the same box.
  const call = /│ \? (\S+)\s+(.*?)\s*│/.exec(screen);
  return { reason: 'permission', detail: `Allow execution of [${ask[1]}]?${call ? `: ${call[1]} ${call[2]}` : ''}` };
}

/** The input box's text ('' when it shows its placeholder), or null when none is shown (a dialog has the keyboard). */
export function geminiInputBox(ansiScreen: string): string | null {
  const screen = strip(ansiScreen);
  if (geminiDialogOnScreen(screen) || /Do you trust the files in this folder\?/.test(screen)) return null;
  const lines = screen.split('\n');
  for (let i = lines.length - 1; i > 0; i--) {
    const m = /^ > {1,3}(.*)$/.exec(lines[i]!);
    // The box's line sits under a rule (the approval mode's hint and blank lines between them).
    if (!m || !lines.slice(Math.max(0, i - 4), i).some((l) => /^─{10,}/.test(l))) continue;
    const text = m[1]!.trimEnd();
    return PLACEHOLDER.test(text) ? '' : text;
  }
  return null;
}

/** Gemini CLI back at its input with no work under way: the empty box, no "esc to cancel", no dialog. */
export function geminiIdleOnScreen(screen: string): boolean {
  return geminiInputBox(screen) === '' && !/\(esc to cancel/.test(screen);
}

/** Gemini CLI's first-run screens (0.61.0). */
export const GEMINI_FIRST_RUN: readonly SetupScreen[] = [
  // Its project hooks (Trellis's signals) run only in a trusted folder; trust restarts it.
  { match: [/Do you trust the files in this folder\?/], detail: 'folder trust: Gemini CLI asks whether to trust this folder ("Trust folder"; answer with trellis session answer <id> trust)' },
  { match: [/Get started|How would you like to authenticate/], detail: 'login: Gemini CLI asks how to authenticate (set GEMINI_API_KEY and security.auth.selectedType, or log in)' },
];
