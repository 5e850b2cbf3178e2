import { describe, expect, it } from 'vitest';
import { setupDialog } from './setup-screens.js';

/** Screens as the real programs drew them in a 150-column tmux pane (Claude Code 2.1.197, Codex 0.169.0), blank lines dropped. */
const SCREENS = {
  claudeTrust: ` Accessing workspace:
 /tmp/ah-repo-fSF4Q8
 Quick safety check: Is this a project you created or one you trust? (Like your own code, a well-known open source project, or work from your team).
 If not, take a moment to review what's in this folder first.
 Claude Code'll be able to read, edit, and execute files here.
 Security guide
 ❯ 1. Yes, I trust this folder
   2. No, exit
 Enter to confirm · Esc to cancel`,
  claudeKey: `  Detected a custom API key in your environment
  ANTHROPIC_API_KEY: sk-ant-...6789abcdefghijklmnop
  Do you want to use this API key?
    1. Yes
  ❯ 2. No (recommended)
  Enter to confirm · Esc to cancel`,
  claudeTheme: ` Let's get started.
 Choose the text style that looks best with your terminal
 To change this later, run /theme
   1. Auto (match terminal)
 ❯ 2. Dark mode ✔`,
  claudeSecurity: ` Security notes:
 1. Claude can make mistakes.
 Press Enter to continue…`,
  claudeOffline: ` Unable to connect to Anthropic services
 Failed to connect to api.anthropic.com: ENOTFOUND
 Please check your internet connection and network settings.`,
  claudePrompt: ` ▐▛███▜▌   Claude Code v2.1.197
❯ say hi
● Fake reply to: say hi
❯ 
  ? for shortcuts · ← for agents`,
  claudeBashPermission: ` Bash command
   touch /tmp/ah/x
 Do you want to proceed?
 ❯ 1. Yes
   3. No`,
  codexFolder: `  Folder access
  /tmp/ah-repo-TfL8xu
  Trust this folder? Codex can read, edit, and run files here, subject to your permission settings.
› 1. Trust and continue
  2. Back to Agent Command Center`,
  codexSignIn: `  Welcome to Codex, OpenAI's command-line coding agent
  Choose how you want to use Codex.
> 1. Sign in with ChatGPT
     Usage included with Plus, Pro, Business, and Enterprise plans`,
  codexHooks: `  Hooks need review
  8 hooks are new or changed.
› 1. Review hooks
  2. Trust all and continue`,
  codexPrompt: `  >_ OpenAI Codex (v0.169.0)
› say hi
• Fake reply to: say hi
› Ask Codex to do anything`,
};

describe('setup dialogs read from the pane', () => {
  it.each([
    ['claude', SCREENS.claudeTrust, /^workspace trust/],
    ['claude', SCREENS.claudeKey, /^API key confirmation/],
    ['claude', SCREENS.claudeTheme, /^onboarding: .*theme/],
    ['claude', SCREENS.claudeSecurity, /^onboarding: .*security notes/],
    ['claude', SCREENS.claudeOffline, /^no connection/],
    ['codex', SCREENS.codexFolder, /^folder access/],
    ['codex', SCREENS.codexSignIn, /^login/],
    ['codex', SCREENS.codexHooks, /^hooks review/],
  ] as const)('%s: %#', (harness, screen, detail) => {
    expect(setupDialog(harness, screen)).toMatch(detail);
  });

  it('the agent’s own prompt and its in-turn dialogs are no setup; another harness’s dialog is not this one’s', () => {
    expect(setupDialog('claude', SCREENS.claudePrompt)).toBeNull();
    expect(setupDialog('claude', SCREENS.claudeBashPermission)).toBeNull();
    expect(setupDialog('codex', SCREENS.codexPrompt)).toBeNull();
    expect(setupDialog('codex', SCREENS.claudeTrust)).toBeNull();
    expect(setupDialog('shell', SCREENS.claudeTrust)).toBeNull();
  });
});
