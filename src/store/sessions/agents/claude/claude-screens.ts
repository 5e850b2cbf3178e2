import type { AwaitReason } from '../../../../events/index.js';
import type { KeyedDialog, SetupScreen } from '../adapter.js';

/*
 * Claude Code's screens as the real programs draw them (checked against 2.1.197 and 2.1.331, captured in
 * test/agents/recordings/): its input box, and the dialogs that wait on a person mid-turn. Read from the
 * pane as the fallback to its hooks (DESIGN.md §9), and first where no hook says it in time (2.1.331's
 * auto-mode dialog is announced only by a Notification 6–7 s later).
 */

/** The auto-mode dialog's words (2.1.331+; no hook announces it) and the auto-mode default question's. */
const AUTO_MODE_STAY = /Enter to stay in auto mode/;
const AUTO_MODE_DEFAULT = /Make auto mode your default\?/;
const AUTO_MODE_DEFAULT_DETAIL = 'auto mode default: Claude Code asks whether to make auto mode its default ("Make auto mode your default?")';

/** Claude Code's input box: a prompt line (`❯`) between two horizontal rules. */
const INPUT_BOX = /^─{20,}\n❯(.*)\n─{20,}$/m;
/** What Claude Code shows while a turn runs (its footer), or while a dialog waits for an answer. */
const BUSY = /esc to interrupt|Do you want to|Esc to cancel/i;

/**
 * Claude Code after Esc mid-turn (no hook fires): its input box is back (holding the interrupted prompt)
 * and the footer no longer says "esc to interrupt".
 */
export function claudeIdleOnScreen(screen: string): boolean {
  return INPUT_BOX.test(screen) && !BUSY.test(screen);
}

/**
 * The last `rows` rows Claude Code has drawn. It draws from the top of its pane, not the bottom: until the
 * conversation fills the pane the rows below its footer are blank (a 50-row pane after one short turn had
 * its input box on rows 19–21 of 50), so the tail is taken after the blank rows, never of the whole pane.
 */
function drawnTail(screen: string, rows: number): string {
  const lines = screen.split('\n');
  let end = lines.length;
  while (end > 0 && lines[end - 1]!.replace(/\x1b\[[0-9;:]*[A-Za-z]/g, '').trim() === '') end--;
  return lines.slice(Math.max(0, end - rows), end).join('\n');
}

/** A dialog mid-turn: what it waits for and its name for a person. */
export interface ScreenDialog {
  readonly reason: AwaitReason;
  readonly detail: string;
}

const DIALOGS: readonly { readonly match: readonly RegExp[]; readonly reason: AwaitReason; readonly detail: string }[] = [
  {
    match: [/Auto mode can't check actions in this session/, AUTO_MODE_STAY],
    reason: 'permission',
    detail: 'auto mode: Claude Code cannot check actions through this API gateway ("Enter to stay in auto mode" then asks for each action; shift+Tab leaves for accept-edits mode)',
  },
  { match: [AUTO_MODE_DEFAULT], reason: 'dialog', detail: AUTO_MODE_DEFAULT_DETAIL },
  { match: [/Enter to select · ↑\/↓ to navigate/], reason: 'question', detail: 'question: Claude Code asks a question (choose an option by its text)' },
  { match: [/Do you want to proceed\?/], reason: 'permission', detail: 'permission: Claude Code asks before running a tool ("Do you want to proceed?")' },
  { match: [/Do you want to (make this edit|create|allow)/], reason: 'permission', detail: 'permission: Claude Code asks before changing a file' },
];

/** The dialog waiting on a person on `screen` (a pane's plain text), or null. */
export function claudeDialogOnScreen(screen: string): ScreenDialog | null {
  // Only what is below the conversation: the dialogs draw at the bottom of what is drawn.
  const tail = drawnTail(screen, 40);
  const found = DIALOGS.find((d) => d.match.every((re) => re.test(tail)));
  if (!found) return null;
  if (found.reason !== 'permission' || found.detail.startsWith('auto mode')) return { reason: found.reason, detail: found.detail };
  // The tool and what it would do: its kind as a heading, its command between dashed rules.
  const kind = /^ (Bash command|Edit file|Write file|Create file|Fetch)\s*$/m.exec(tail)?.[1];
  const what = /^╌{10,}\n(.+)\n/m.exec(tail)?.[1]?.trim();
  return { reason: found.reason, detail: kind ? `${found.detail}: ${kind}${what ? ` ${what}` : ''}` : found.detail };
}

/** Placeholders Claude Code shows in an empty input box, by their words (2.1.331, after a failed turn). */
const KNOWN_PLACEHOLDERS: ReadonlySet<string> = new Set(['Resend your message to try again']);

/** SGR faint (`2`, alone or among other parameters): how Claude Code draws its input box's placeholder. */
const PLACEHOLDER = /\x1b\[(?:[0-9;]*;)?2(?:;[0-9;]*)?m/;

/**
 * What the input box holds, read from the pane with its colors (`capture-pane -e`): '' when empty (its
 * placeholder, drawn faint, is not text), the text when the person or a restored prompt left some, null
 * when no input box is on screen (a dialog has the keyboard).
 */
export function claudeInputBox(ansiScreen: string): string | null {
  const plain = ansiScreen.replace(/\x1b\[[0-9;:]*[A-Za-z]/g, '');
  const m = INPUT_BOX.exec(drawnTail(plain, 30));
  if (!m) return null;
  const lines = ansiScreen.split('\n');
  const raw = lines.reverse().find((l) => /^(\x1b\[[0-9;:]*m)*❯/.test(l)) ?? '';
  const after = raw.replace(/^(\x1b\[[0-9;:]*m)*❯/, '');
  const text = after.replace(/\x1b\[[0-9;:]*[A-Za-z]/g, '').replace(/\u00a0/g, ' ').trim();
  if (text === '') return '';
  // The placeholder ("Try …", "Resend your message to try again") is drawn faint behind the cursor: the box is empty.
  // The one a failed turn leaves is also known by its words: a capture once showed it without the faint
  // attribute, and a prompt held behind a placeholder read as text is never delivered.
  return PLACEHOLDER.test(after) || KNOWN_PLACEHOLDERS.has(text) ? '' : text;
}

/** The auto-mode dialog has no option list: each choice is a key (2.1.331's words; 2.1.332 keeps them). */
export const CLAUDE_KEYED_DIALOGS: readonly KeyedDialog[] = [
  { match: AUTO_MODE_STAY, keys: { approve: 'Enter', stay: 'Enter', leave: 'BTab', deny: 'Escape', cancel: 'Escape' } },
];

/** Claude Code's first-run screens (checked against 2.1.197, 2.1.331 and 2.1.332). */
export const CLAUDE_FIRST_RUN: readonly SetupScreen[] = [
  // Since ~2.1.252 the dialog pre-selects "No, exit" (Enter quits): answer it by name, never with a blind Enter.
  { match: [/Yes, I trust this folder/], detail: 'workspace trust: Claude Code asks whether to trust this folder ("Yes, I trust this folder"; answer with trellis session answer <id> trust)' },
  { match: [AUTO_MODE_DEFAULT], detail: AUTO_MODE_DEFAULT_DETAIL },
  { match: [/Detected a custom API key/], detail: 'API key confirmation: Claude Code asks whether to use ANTHROPIC_API_KEY ("Detected a custom API key")' },
  { match: [/Choose the text style/], detail: 'onboarding: Claude Code’s first-run theme choice ("Choose the text style")' },
  { match: [/Security notes:/, /Press Enter to continue/], detail: 'onboarding: Claude Code’s security notes ("Press Enter to continue")' },
  { match: [/Select login method|Log in with your|Paste code here/], detail: 'login: Claude Code is not logged in and asks how to log in' },
  { match: [/Unable to connect to Anthropic services/], detail: 'no connection: Claude Code cannot reach Anthropic ("Unable to connect to Anthropic services")' },
];
