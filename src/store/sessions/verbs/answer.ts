import { setTimeout as sleep } from 'node:timers/promises';
import { isTrellisError, TrellisError, type AwaitReason } from '../../../events/index.js';
import { sessionView, type SessionState, type SessionView } from '../../../projections/index.js';
import type { SessionsProject } from '../log/sessions-project.js';
import { adapterOf } from '../agents/index.js';
import { dialogOptions, answerGoesOn, optionNamed } from '../agents/dialog-options.js';
import { capturePane } from '../tmux/pane-capture.js';
import { inLane } from '../tmux/pane-input.js';
import type { PaneTarget } from '../tmux/pane-target.js';
import { unknownSession } from '../log/unknown-session.js';
import { record, type BareCommand, type SessionRuntime } from './runtime.js';

/** How long the selection may take to follow the arrow keys, and the dialog to go after the answer. */
const SETTLE_MS = 3_000;
const POLL_MS = 100;

export interface AnswerResult {
  readonly session: SessionView;
  /** The option chosen, as the screen showed it (or the key pressed for a dialog with no options). */
  readonly chose: string;
  /** Every option the dialog offered. */
  readonly options: readonly string[];
}

/**
 * Answers the dialog on a session's screen by name (DESIGN.md §9: never a blind key): reads the options
 * from the pane, finds the one `choice` names (its text; `approve`, `deny`, `trust` for the usual ones),
 * moves the selection onto it, checks on the screen that it is selected, and only then confirms. A choice
 * the dialog does not offer is refused naming those it does; nothing is typed. The screen after it is
 * recorded (source `pane`): the next dialog, the agent back at its input, or at work.
 */
export async function answerSession(p: SessionsProject, rt: SessionRuntime, id: string, choice: string, by: string, via: AnswerChannel): Promise<AnswerResult> {
  if (typeof choice !== 'string' || choice.trim() === '') throw new TrellisError('INVALID_INPUT', 'an answer needs a choice: an option’s text, or approve, deny, trust');
  const state = await p.sessionLog.get(id);
  if (state.status === 'absent') throw await unknownSession(p, id);
  if (!state.tmux || !['starting', 'awaiting', 'running', 'review', 'merging'].includes(state.status)) {
    throw new TrellisError('SESSION_REFUSED', `the session is ${state.reason ? `${state.status}{${state.reason}}` : state.status}: it has no live agent to answer`);
  }
  // An agent with an API for its permissions (opencode) is answered through it: no key is typed at all.
  const adapter = adapterOf(state.harness);
  if (adapter.answer && adapter.answersByApi?.(state) !== false) {
    const { chose, options } = await adapter.answer(state, choice);
    await recordAnswer(p, id, chose, by, via);
    return { session: sessionView(await p.sessionLog.get(id)), chose, options };
  }
  const target: PaneTarget = { socket: rt.tmux.socket, session: state.tmux.session, pane: state.tmux.pane };
  const read = () => capturePane(target).then((c) => c.text);
  const { chose, options } = await inLane(p.sessionWork.input, target, async ({ keys }) => {
    const screen = await read();
    const keyed = adapter.keyedDialogs?.find((k) => k.match.test(screen));
    if (keyed) {
      const key = keyed.keys[choice.trim().toLowerCase()];
      if (!key) throw new TrellisError('INVALID_INPUT', `the dialog on screen takes ${Object.keys(keyed.keys).join(', ')}; '${choice}' is none of them`);
      await keys([key]);
      return { chose: `${choice.trim().toLowerCase()} (${key})`, options: Object.keys(keyed.keys) };
    }
    const dialog = dialogOptions(screen);
    if (!dialog) throw new TrellisError('SESSION_REFUSED', `session ${id} shows no dialog with options to answer (trellis session capture ${id} shows its screen)`);
    const want = optionNamed(dialog.options, choice);
    if (want === null) throw new TrellisError('INVALID_INPUT', `the dialog offers ${dialog.options.map((o) => JSON.stringify(o)).join(', ')}; '${choice}' names none of them`);
    const delta = want - dialog.selected;
    if (delta !== 0) await keys(Array.from({ length: Math.abs(delta) }, () => (delta > 0 ? 'Down' : 'Up')));
    // Confirmed only once the screen shows the selection on the chosen option.
    const deadline = Date.now() + SETTLE_MS;
    for (let now = dialogOptions(await read()); now?.selected !== want || now.options[want] !== dialog.options[want]; now = dialogOptions(await read())) {
      if (Date.now() > deadline) throw new TrellisError('SESSION_REFUSED', `the selection did not reach "${dialog.options[want]}" (it shows ${now ? JSON.stringify(now.options[now.selected]) : 'no dialog'}): nothing was confirmed`);
      await sleep(POLL_MS);
    }
    await keys(['Enter']);
    return { chose: dialog.options[want]!, options: dialog.options };
  });
  await recordAfter(p, state, read, by, { option: chose, via });
  return { session: sessionView(await p.sessionLog.get(id)), chose, options };
}

/** Who may say through which channel an answer came: the door's stamp (gateway), else the plain page or the CLI. */
export type AnswerChannel = 'the page' | 'the CLI' | 'a notification' | 'ntfy' | 'a webhook link';
export const ANSWER_CHANNELS: readonly AnswerChannel[] = ['the page', 'the CLI', 'a notification', 'ntfy', 'a webhook link'];

/** The answer took: the fact a later tap on a notification of this wait reads ("already answered: Yes, from the page at 14:02"). */
const recordAnswer = (p: SessionsProject, id: string, option: string, by: string, via: AnswerChannel) =>
  record(p, id, { type: 'answer', option, via, by, source: 'user' });

/**
 * After the answer: once the screen has changed, the answer took (its fact is recorded first, so whoever
 * sees the wait end can read who ended it), a new dialog is that wait; otherwise it works. The input box
 * back ends the turn only after an answer that stopped the agent (a refusal, which no hook says): one that
 * lets the tool go on (answerGoesOn) continues the turn, whose end is the agent's own signal. Claude Code
 * shows its input box for a moment between a question answered and its next request (2.1.332 under load:
 * turn-end recorded before the answer reached the model). Signals that landed while the screen settled
 * (the turn went on, perhaps ended) are not overwritten: the agent is said to have left the dialog only
 * while the log still shows the wait answered (busy `left`, decided against the log as it is appended). A dialog still the same after SETTLE_MS did not take it:
 * no fact, no move. A setup dialog is left to the setup watcher and the agent's first signal.
 */
async function recordAfter(p: SessionsProject, state: SessionState, read: () => Promise<string>, by: string, answer: { option: string; via: AnswerChannel }): Promise<void> {
  if (state.status === 'starting' || state.reason === 'setup') {
    await recordAnswer(p, state.id, answer.option, by, answer.via);
    return;
  }
  const adapter = adapterOf(state.harness);
  const before = await read().catch(() => '');
  const deadline = Date.now() + SETTLE_MS;
  let screen = before;
  let dialog = adapter.dialogOnScreen?.(screen) ?? null;
  let moved = !dialog;
  while (dialog && Date.now() < deadline) {
    await sleep(POLL_MS);
    screen = await read().catch(() => '');
    const next = adapter.dialogOnScreen?.(screen) ?? null;
    if (!next || next.detail !== dialog.detail) {
      dialog = next;
      moved = true;
      break;
    }
  }
  const left = state.status === 'awaiting' && state.reason ? { left: state.reason as AwaitReason } : {};
  const commands: { command: BareCommand; source: 'user' | 'pane' }[] = [{ command: { type: 'busy', ...left }, source: 'user' }];
  if (moved) commands.unshift({ command: { type: 'answer', option: answer.option, via: answer.via }, source: 'user' });
  if (dialog) commands.push({ command: { type: 'await', reason: dialog.reason, detail: dialog.detail }, source: 'pane' });
  else if (!answerGoesOn(state.reason, answer.option) && adapter.idleOnScreen?.(screen)) commands.push({ command: { type: 'idle' }, source: 'pane' });
  for (const { command, source } of commands) {
    await record(p, state.id, { ...command, by, source }).catch((err: unknown) => {
      if (!(isTrellisError(err) && err.code === 'SESSION_REFUSED')) throw err;
    });
  }
}
