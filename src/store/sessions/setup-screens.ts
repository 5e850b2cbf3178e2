/**
 * The first-run screens each agent shows before it takes a prompt (and before its first hook fires), as
 * the real programs draw them (checked against Claude Code 2.1.197 and 2.1.331, and Codex 0.169.0). Read from the pane
 * while a session is `starting`: a match is `awaiting{setup}` with the dialog named in `detail`.
 */
export interface SetupScreen {
  /** Text on screen that identifies the dialog (all must be present). */
  readonly match: readonly RegExp[];
  /** The dialog, named for a person: what it asks and how to answer it. */
  readonly detail: string;
}

const CLAUDE: readonly SetupScreen[] = [
  // Since ~2.1.252 the dialog pre-selects "No, exit" (Enter quits): answer it by name, never with a blind Enter.
  { match: [/Yes, I trust this folder/], detail: 'workspace trust: Claude Code asks whether to trust this folder ("Yes, I trust this folder"; answer with trellis session answer <id> trust)' },
  { match: [/Make auto mode your default\?/], detail: 'auto mode default: Claude Code asks whether to make auto mode its default ("Make auto mode your default?")' },
  { match: [/Detected a custom API key/], detail: 'API key confirmation: Claude Code asks whether to use ANTHROPIC_API_KEY ("Detected a custom API key")' },
  { match: [/Choose the text style/], detail: 'onboarding: Claude Code’s first-run theme choice ("Choose the text style")' },
  { match: [/Security notes:/, /Press Enter to continue/], detail: 'onboarding: Claude Code’s security notes ("Press Enter to continue")' },
  { match: [/Select login method|Log in with your|Paste code here/], detail: 'login: Claude Code is not logged in and asks how to log in' },
  { match: [/Unable to connect to Anthropic services/], detail: 'no connection: Claude Code cannot reach Anthropic ("Unable to connect to Anthropic services")' },
];

const CODEX: readonly SetupScreen[] = [
  { match: [/Sign in with ChatGPT/], detail: 'login: Codex is not logged in ("Sign in with ChatGPT")' },
  { match: [/Folder access/, /Trust this folder\?/], detail: 'folder access: Codex asks whether to trust this folder ("1. Trust and continue")' },
  { match: [/Hooks need review/], detail: 'hooks review: Codex asks to review new hooks ("Hooks need review")' },
];

const GEMINI: readonly SetupScreen[] = [
  // Its project hooks (Trellis's signals) run only in a trusted folder; trust restarts it.
  { match: [/Do you trust the files in this folder\?/], detail: 'folder trust: Gemini CLI asks whether to trust this folder ("Trust folder"; answer with trellis session answer <id> trust)' },
  { match: [/Get started|How would you like to authenticate/], detail: 'login: Gemini CLI asks how to authenticate (set GEMINI_API_KEY and security.auth.selectedType, or log in)' },
];

const SCREENS: Readonly<Record<string, readonly SetupScreen[]>> = { claude: CLAUDE, codex: CODEX, gemini: GEMINI };

/** The setup dialog on `screen` (a pane's text) for an agent of `harness`, or null. */
export function setupDialog(harness: string, screen: string): string | null {
  return (SCREENS[harness] ?? []).find((s) => s.match.every((re) => re.test(screen)))?.detail ?? null;
}

/** Whether a harness has setup screens to watch for (an agent with a first run). */
export const hasSetupScreens = (harness: string): boolean => (SCREENS[harness] ?? []).length > 0;
