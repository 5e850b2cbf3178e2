import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { PreflightContext } from '../preflight-context.js';

/** Claude Code's own state file: `~/.claude.json` (or under `CLAUDE_CONFIG_DIR`). */
export function claudeStatePath(env: NodeJS.ProcessEnv): string {
  return env.CLAUDE_CONFIG_DIR ? join(env.CLAUDE_CONFIG_DIR, '.claude.json') : join(env.HOME || homedir(), '.claude.json');
}

/** Where a `/login` keeps its credentials. */
const credentialsPath = (env: NodeJS.ProcessEnv): string => join(env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), '.claude'), '.credentials.json');

const obj = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/**
 * What Claude Code's first run will ask in this project, read from its own state (checked against
 * 2.1.197): onboarding (theme, security notes), trust of the main checkout (keyed by its path; an
 * accepted parent folder counts, and one acceptance covers every worktree), and how it authenticates
 * (an `ANTHROPIC_API_KEY` it must approve once, or a login). Each gap is a warning with its repair.
 */
export function claudePreflight(ctx: PreflightContext): string[] {
  const file = claudeStatePath(ctx.env);
  let state: Record<string, unknown> = {};
  try {
    state = obj(JSON.parse(readFileSync(file, 'utf8')));
  } catch {
    // Never run here: every check below reports what is missing.
  }
  const warnings: string[] = [];
  const firstRun = `run 'claude' once in a terminal in ${ctx.mainRoot} and answer its questions`;
  if (state.hasCompletedOnboarding !== true) {
    warnings.push(`Claude Code has not been set up for this user (no finished onboarding in ${file}): the session will wait on its first-run screens (awaiting{setup}); ${firstRun}`);
  }
  const projects = obj(state.projects);
  const trusted = ancestors(ctx.mainRoot).some((dir) => obj(projects[dir]).hasTrustDialogAccepted === true);
  if (!trusted) {
    warnings.push(
      `Claude Code has not trusted ${ctx.mainRoot}: the session will wait on its workspace trust dialog (awaiting{setup}); ${firstRun} ("Yes, I trust this folder" once covers every session's worktree), or answer it in the session's pane (trellis session attach <id>)`,
    );
  }
  const key = ctx.env.ANTHROPIC_API_KEY;
  if (key) {
    const responses = obj(state.customApiKeyResponses);
    const tail = key.slice(-20);
    if (strings(responses.rejected).includes(tail)) {
      warnings.push(`Claude Code has rejected the ANTHROPIC_API_KEY in this environment (remembered in ${file}): it will not use it; ${firstRun} or remove the key's entry from customApiKeyResponses.rejected`);
    } else if (!strings(responses.approved).includes(tail)) {
      warnings.push(`Claude Code has not approved the ANTHROPIC_API_KEY in this environment: the session will wait on "Detected a custom API key" (awaiting{setup}); ${firstRun} and choose "Yes"`);
    }
  } else if (!ctx.env.ANTHROPIC_AUTH_TOKEN && !ctx.env.CLAUDE_CODE_OAUTH_TOKEN && !state.oauthAccount && !state.primaryApiKey && !existsSync(credentialsPath(ctx.env))) {
    warnings.push(`Claude Code is not logged in and no ANTHROPIC_API_KEY is set: the session will wait on its login screen (awaiting{setup}); run 'claude' and '/login', or set ANTHROPIC_API_KEY`);
  }
  return warnings;
}

/** `dir` and every folder above it. */
function ancestors(dir: string): string[] {
  const out: string[] = [];
  for (let d = dir; ; d = dirname(d)) {
    out.push(d);
    if (dirname(d) === d) return out;
  }
}
