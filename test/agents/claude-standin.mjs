#!/usr/bin/env node
/**
 * A stand-in for Claude Code, as the forge stand-in is for GitHub: it behaves toward its hooks exactly
 * as Claude Code's documented hook protocol does. It reads the hooks from `.claude/settings.json` and
 * `.claude/settings.local.json` in its working directory and runs each matching command with `sh -c`,
 * the hook's JSON on stdin, waiting for it as Claude Code does:
 *   SessionStart     {session_id, transcript_path, cwd, hook_event_name, source: startup|resume}
 *   UserPromptSubmit {session_id, transcript_path, cwd, hook_event_name, prompt}
 *   Stop             {session_id, transcript_path, cwd, hook_event_name, stop_hook_active: false}
 *   Notification     {session_id, transcript_path, cwd, hook_event_name, message, notification_type}
 *                    (matchers match notification_type: permission_prompt, idle_prompt, ...)
 *   SessionEnd       {session_id, transcript_path, cwd, hook_event_name, reason}
 *   PermissionRequest, PreToolUse, PostToolUse {…, tool_name, tool_input[, tool_response]}
 *   StopFailure      {…, error, last_assistant_message}
 * (the shapes of Claude Code 2.1.197's recorded payloads, test/agents/recordings/).
 * Usage as Claude Code's: `claude [prompt]`, `claude --resume <session-id>`. Each prompt (the argument,
 * then each line typed or pasted into the terminal) is one turn; a few scripted prompts drive the other
 * notifications:
 *   "ask permission"  → UserPromptSubmit, PreToolUse{Bash}, PermissionRequest{Bash}, then
 *                       Notification{permission_prompt}; a dialog is open: the next line typed (Enter,
 *                       or whatever text) answers it, as Enter answers Claude Code's dialog → PostToolUse, Stop
 *   "ask question"    → the same with its AskUserQuestion tool (announced as a permission_prompt too)
 *   "fail <error>"    → UserPromptSubmit, StopFailure{error}, then Notification{idle_prompt}
 *   "stop then idle"  → UserPromptSubmit, Stop, then Notification{idle_prompt} (what Claude Code sends
 *                       after 60 s at the prompt)
 *   "/resume", "/clear" → SessionEnd{resume|clear}, SessionStart{resume|clear}: the program stays
 *   "/exit"           → SessionEnd{prompt_input_exit}, exit
 *   anything else     → UserPromptSubmit, then Stop
 * Every line it reads is logged ({prompt} or, in a dialog, {dialogAnswer}).
 * Its screen is Claude Code's input box, or its permission dialog while one is open (see draw()).
 * It writes what it was started with and each hook it ran to $TRELLIS_HOME/standin/<TRELLIS_SESSION>.log.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const args = process.argv.slice(2);
// As Claude Code's own parser reads them: `--resume <id>` or `--resume=<id>`; after `--`, the prompt.
const dashes = args.indexOf('--');
const options = dashes < 0 ? args : args.slice(0, dashes);
const resumeAt = options.findIndex((a) => a === '--resume' || a.startsWith('--resume='));
let sessionId = resumeAt < 0 ? randomUUID() : options[resumeAt] === '--resume' ? options[resumeAt + 1] : options[resumeAt].slice('--resume='.length);
const prompt = dashes >= 0 ? args[dashes + 1] : options.filter((_, i) => resumeAt < 0 || (i !== resumeAt && i !== resumeAt + 1)).find((a) => !a.startsWith('--'));
const cwd = process.cwd();
const transcript = join(process.env.HOME ?? '/tmp', '.claude', 'projects', 'standin', `${sessionId}.jsonl`);
const logDir = join(process.env.TRELLIS_HOME ?? '/tmp', 'standin');
mkdirSync(logDir, { recursive: true });
const logFile = join(logDir, `${process.env.TRELLIS_SESSION ?? 'none'}.log`);
const log = (line) => appendFileSync(logFile, `${JSON.stringify(line)}\n`);
log({ started: args });

function settingsHooks() {
  const hooks = {};
  for (const name of ['settings.json', 'settings.local.json']) {
    try {
      const parsed = JSON.parse(readFileSync(join(cwd, '.claude', name), 'utf8'));
      for (const [event, groups] of Object.entries(parsed.hooks ?? {})) (hooks[event] ??= []).push(...groups);
    } catch {}
  }
  return hooks;
}

/** Runs every hook configured for `event` whose matcher matches, with the payload on stdin. */
function fire(event, extra, matchOn) {
  const payload = { session_id: sessionId, transcript_path: transcript, cwd, hook_event_name: event, ...extra };
  for (const group of settingsHooks()[event] ?? []) {
    const matcher = group.matcher ?? '';
    if (matcher && matcher !== '*' && matchOn !== undefined && !new RegExp(`^(${matcher})$`).test(matchOn)) continue;
    for (const hook of group.hooks ?? []) {
      if (hook.type !== 'command') continue;
      const r = spawnSync('sh', ['-c', hook.command], { cwd, input: JSON.stringify(payload), encoding: 'utf8', timeout: 60_000 });
      log({ hook: event, status: r.status, ...(r.status ? { stderr: r.stderr } : {}) });
    }
  }
}

/** The tool whose dialog is open (the next line answers it), or null. */
let dialog = null;
/** A turn runs (between its UserPromptSubmit and its Stop): the footer says "esc to interrupt", as Claude Code's does. */
let busy = false;

function turn(text) {
  if (dialog) {
    log({ dialogAnswer: text });
    const tool = dialog;
    dialog = null;
    // The dialog is gone from the screen as soon as it is answered, before the tool's hooks run.
    draw();
    fire('PostToolUse', { tool_name: tool.name, tool_input: tool.input, tool_response: { stdout: '' } }, tool.name);
    fire('Stop', { stop_hook_active: false, last_assistant_message: 'done' });
    busy = false;
    return;
  }
  log({ prompt: text });
  if (text === '/exit') {
    fire('SessionEnd', { reason: 'prompt_input_exit' });
    process.exit(0);
  }
  if (text === '/resume' || text === '/clear') {
    fire('SessionEnd', { reason: text.slice(1) });
    if (text === '/clear') sessionId = randomUUID();
    fire('SessionStart', { source: text.slice(1) }, text.slice(1));
    return;
  }
  busy = true;
  draw();
  fire('UserPromptSubmit', { prompt: text });
  if (text === 'ask permission' || text === 'ask question') {
    dialog = text === 'ask permission'
      ? { name: 'Bash', input: { command: 'ls -la /tmp', description: 'List /tmp' } }
      : { name: 'AskUserQuestion', input: { questions: [{ question: 'Which color?', header: 'Color', options: [{ label: 'Red' }, { label: 'Blue' }], multiSelect: false }] } };
    fire('PreToolUse', { tool_name: dialog.name, tool_input: dialog.input }, dialog.name);
    fire('PermissionRequest', { tool_name: dialog.name, tool_input: dialog.input }, dialog.name);
    fire('Notification', { message: 'Claude needs your permission', notification_type: 'permission_prompt' }, 'permission_prompt');
    return;
  }
  if (text.startsWith('fail ')) {
    const error = text.slice(5);
    const said = error === 'authentication_failed' ? 'Not logged in · Please run /login' : 'API Error: 500 Internal server error';
    fire('StopFailure', { error, last_assistant_message: said });
    busy = false;
    fire('Notification', { message: 'Claude is waiting for your input', notification_type: 'idle_prompt' }, 'idle_prompt');
    return;
  }
  fire('Stop', { stop_hook_active: false });
  busy = false;
  if (text === 'stop then idle') fire('Notification', { message: 'Claude is waiting for your input', notification_type: 'idle_prompt' }, 'idle_prompt');
}

/**
 * Its screen, drawn as Claude Code's is read (the screens in test/agents/recordings/): at its input, the
 * input box (`❯` between two rules, the cursor in it, what is typed echoed there), with "esc to interrupt"
 * below it while a turn runs (a screen watcher reads an idle box mid-turn as a turn that ended with no
 * hook); with a dialog open, the dialog and its options instead.
 */
function draw() {
  const rule = '─'.repeat(40);
  // Its question tool draws a selection list, as Claude Code's does (a screen watcher tells it from a permission).
  if (dialog?.name === 'AskUserQuestion') process.stdout.write(`\x1b[2J\x1b[H Which color?\n ❯ 1. Red\n   2. Blue\n\n Enter to select · ↑/↓ to navigate · Esc to cancel\n`);
  else if (dialog) process.stdout.write(`\x1b[2J\x1b[H Do you want to proceed?\n ❯ 1. Yes\n   2. No\n\n Esc to cancel\n`);
  else if (busy) process.stdout.write(`\x1b[2J\x1b[H${rule}\n\n${rule}\n  esc to interrupt\x1b[2A\r❯ `);
  else process.stdout.write(`\x1b[2J\x1b[H${rule}\n\n${rule}\x1b[1A\r❯ `);
}

fire('SessionStart', { source: resumeAt >= 0 ? 'resume' : 'startup' }, resumeAt >= 0 ? 'resume' : 'startup');
if (prompt) turn(prompt);
draw();
const rl = createInterface({ input: process.stdin });
rl.on('line', (line) => {
  const text = line.trim();
  // As Claude Code does, the submitted text leaves the input box before the turn's hooks run.
  if (!dialog) draw();
  if (text || dialog) turn(text);
  draw();
});
rl.on('close', () => process.exit(0));
