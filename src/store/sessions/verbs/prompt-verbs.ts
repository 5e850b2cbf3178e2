import { promptHold, TrellisError, type AwaitReason } from '../../../events/index.js';
import { sessionView, type SessionState, type SessionView } from '../../../projections/index.js';
import { appendCommand, sessionState } from '../log/session-append.js';
import type { SessionLogProject, SessionsProject } from '../log/sessions-project.js';
import { adapterOf } from '../agents/index.js';
import { boxNotReady } from './delivery.js';
import { deliver, SUPERVISOR, type Delivery, type SessionRuntime } from './runtime.js';
import { noteScreenDialog } from './screen-watch.js';

/**
 * The prompt is on the timeline (`appended`); `delivered` says whether it reached the pane now, and when
 * not, `reason` says why and that it is delivered when the agent next waits for input.
 */
export type PromptResult = { readonly session: SessionView; readonly appended: true } & Delivery;

/** This session's own texts, which the agent may have put back in its box itself (cleared, not waited for). */
const ownTexts = (s: SessionState): string[] => [s.task, ...s.timeline.map((t) => t.body)];

/**
 * Appends a whole prompt to the session's timeline, then types it into the pane, but only where the
 * agent takes a prompt (DESIGN.md §9, Input): anywhere else it is held on the timeline and delivered
 * when the agent next waits for input (`deliverHeld`), never typed into a dialog. A prompt that the
 * lane could not type (no input box on screen, someone's text that stayed) is held again, saying why:
 * never lost.
 */
export async function promptSession(p: SessionsProject, rt: SessionRuntime, id: string, body: string, by: string, opts: { onWait?: (why: string) => void } = {}): Promise<PromptResult> {
  if (typeof body !== 'string' || body.trim() === '') throw new TrellisError('INVALID_INPUT', 'a prompt needs a body');
  let before = await sessionState(p, id);
  // A dialog on screen that no hook announced yet holds the prompt rather than taking it.
  if (before.pending.length === 0 && adapterOf(before.harness).dialogOnScreen) {
    await noteScreenDialog(p, rt, before);
    before = await sessionState(p, id);
  }
  const { state, events } = await appendCommand(p, id, { type: 'prompt', body, queuesInput: adapterOf(before.harness).queuesInput }, by);
  const prompted = events.find((e) => e.type === 'prompted');
  const held = prompted?.type === 'prompted' ? prompted.data.held : undefined;
  if (held) return { session: sessionView(state), appended: true, delivered: false, reason: held };
  const result = await deliver(p.sessionWork.input, rt, state, body, opts);
  if (result.delivered) return { session: sessionView(state), appended: true, ...result };
  const after = await holdAgain(p, id, state.timeline.length - 1, result.reason, before.waiting);
  return { session: sessionView(after), appended: true, delivered: false, reason: after.timeline.at(-1)?.held ?? result.reason };
}

/** Puts prompt `index` back on hold with `reason` (and the wait its typing answered, while the agent still sits at it). */
async function holdAgain(p: SessionLogProject, id: string, index: number, reason: string, waiting: AwaitReason | null): Promise<SessionState> {
  return (await appendCommand(p, id, { type: 'undeliver', index, reason, waiting }, SUPERVISOR, 'supervisor')).state;
}

/**
 * Delivers the session's held prompts, oldest first, while the agent takes input (the server on every
 * transition and as a watched pane changes, and the signal that made the agent wait). The input box is
 * read first: a dialog or someone's text in it keeps the prompt held, its reason renewed on the timeline
 * (once: the same reason again appends nothing). Each delivery is a logged transition, so two processes
 * trying at once type a prompt once; one the lane could not type is held again, never lost.
 */
export async function deliverHeld(p: SessionLogProject, rt: SessionRuntime, id: string): Promise<number> {
  let delivered = 0;
  for (;;) {
    let state = await p.sessionLog.get(id);
    if (state.status === 'absent' || state.pending.length === 0) return delivered;
    const adapter = adapterOf(state.harness);
    if (adapter.dialogOnScreen) {
      await noteScreenDialog(p, rt, state);
      state = await p.sessionLog.get(id);
    }
    const next = state.pending[0]!;
    // Only when the agent takes input now (else the deliver below is refused by the log, nothing typed).
    if (state.tmux && adapter.inputBox && promptHold(state, adapter.queuesInput ?? false) === null) {
      const target = { socket: rt.tmux.socket, session: state.tmux.session, pane: state.tmux.pane };
      const why = await boxNotReady(adapter, target, state, ownTexts(state)).catch((err: Error) => err.message);
      if (why !== null) {
        await holdAgain(p, id, next, why, null);
        return delivered;
      }
    }
    const { state: after, events } = await appendCommand(p, id, { type: 'deliver', queuesInput: adapter.queuesInput }, SUPERVISOR, 'supervisor');
    const done = events.find((e) => e.type === 'delivered');
    if (done?.type !== 'delivered') return delivered;
    const result = await deliver(p.sessionWork.input, rt, after, after.timeline[done.data.index]!.body, {
      onWait: (why) => console.error(`trellis: session ${id}: held prompt ${done.data.index + 1} waits: ${why}`),
    });
    if (!result.delivered) {
      console.error(`trellis: session ${id}: held prompt ${done.data.index + 1} could not be typed: ${result.reason}; it is held again`);
      await holdAgain(p, id, done.data.index, result.reason, state.waiting);
      return delivered;
    }
    if (result.cleared !== undefined) console.error(`trellis: session ${id}: cleared "${result.cleared}" from the input box before held prompt ${done.data.index + 1}`);
    delivered++;
  }
}
