import { setTimeout as sleep } from 'node:timers/promises';
import type { SessionState } from '../../../projections/index.js';
import type { HarnessAdapter } from '../agents/adapter.js';
import { capturePane } from '../tmux/pane-capture.js';
import type { InputLanes } from '../tmux/input-queue.js';
import { inLane } from '../tmux/pane-input.js';
import type { PaneTarget } from '../tmux/pane-target.js';

/** Whether a prompt reached the pane, and why not when it did not (it is on the timeline either way). */
export type Delivery =
  | {
      readonly delivered: true;
      /** What the lane did first: the text it cleared from the input box (the agent's own restored prompt). */
      readonly cleared?: string;
      /** Present when the prompt first waited for a person's text to leave the input box: what it waited for, in words. */
      readonly waited?: string;
    }
  | { readonly delivered: false; readonly reason: string };

export interface DeliverOptions {
  /**
   * Texts the agent may have put back into its box itself (this session's task and prompts: Claude Code
   * restores an interrupted prompt after Esc): one of them in the box is cleared. Any other text is a
   * person's (or a key command's) typing: never cleared, never pasted into; the prompt waits for it.
   */
  readonly restored?: readonly string[];
  /** How long the prompt waits for the box to be empty (submitted or cleared). */
  readonly waitMs?: number;
  /** Told once, when the prompt starts waiting for an empty box: why, in words. */
  readonly onWait?: (why: string) => void;
}

/** How long the input box may take to show what was cleared or pasted. */
const SETTLE_MS = 2_000;
const POLL_MS = 80;
/** How long a prompt waits, by default, for a person's text to leave the input box. */
export const EMPTY_BOX_WAIT_MS = 30_000;
const EMPTY_POLL_MS = 150;

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

/** The box holds what the agent itself put back (a restored prompt, or its folded paste), not someone's typing. */
const isRestored = (box: string, restored: readonly string[]) => /^\[Pasted text #\d+/.test(box) || restored.some((t) => t.trim() !== '' && squash(t) === squash(box));

/** Someone's text in the box, in the words the answer and the timeline say. */
const typingWords = (box: string) => `the agent's input box holds "${box}", which someone is typing: the prompt waits for an empty box (submit or clear that text)`;

/**
 * Types a prompt into an agent whose input box can be read (DESIGN.md §9, one input lane): on the lane,
 * the box must be on screen (else a dialog has the keyboard: not delivered, said so); the agent's own
 * restored prompt left in it is cleared first and said in `cleared`; any other text is someone typing
 * (a viewer, `session keys`): the lane is let go so they can go on, and the prompt waits (said in
 * `onWait` and `waited`) until the box is empty, up to `waitMs`; after the paste the box must show the
 * text before Enter confirms it, else a dialog took it: not delivered, with the reason. Never a paste on
 * top of other text, never a blind Enter.
 */
export async function deliverChecked(lanes: InputLanes, adapter: HarnessAdapter, target: PaneTarget, state: SessionState, text: string, opts: DeliverOptions = {}): Promise<Delivery> {
  const readBox = async () => adapter.inputBox!((await capturePane(target, { ansi: true })).text);
  const dialogNow = async () => adapter.dialogOnScreen?.((await capturePane(target)).text)?.detail ?? 'no input box on screen';
  const deadline = Date.now() + (opts.waitMs ?? EMPTY_BOX_WAIT_MS);
  let waited: string | undefined;
  for (;;) {
    const r = await inLane(lanes, target, async (lane): Promise<Delivery | { typing: string }> => {
      let box = await readBox();
      if (box === null) return { delivered: false, reason: `session ${state.id}'s agent shows a dialog (${await dialogNow()}), not its input box: the prompt was not typed` };
      let cleared: string | undefined;
      if (box !== '') {
        if (!adapter.clearInputKeys || !isRestored(box, opts.restored ?? [])) return { typing: box };
        cleared = box;
        await lane.keys(adapter.clearInputKeys);
        box = await settle(readBox, (b) => b === '');
        if (box !== '') return { delivered: false, reason: `session ${state.id}'s input box still holds "${box ?? '(a dialog)'}" after clearing it: the prompt was not typed` };
      }
      await lane.paste(text, { enter: false });
      // A long or many-line paste is shown folded ("[Pasted text #1 +12 lines]"); a short one as itself.
      const head = squash(text).slice(0, 40);
      const landed = (b: string | null) => b !== null && (squash(b).includes(head) || /\[Pasted text/.test(b));
      box = await settle(readBox, landed);
      if (!landed(box)) {
        return { delivered: false, reason: box === null ? `a dialog appeared as the prompt was pasted (${await dialogNow()}): the prompt was not confirmed` : `the pasted prompt did not show in the input box (it holds "${box}"): not confirmed` };
      }
      if (adapter.enterAfterPasteMs) await sleep(adapter.enterAfterPasteMs);
      await lane.keys(['Enter']);
      return cleared === undefined ? { delivered: true } : { delivered: true, cleared };
    });
    if (!('typing' in r)) return r.delivered && waited !== undefined ? { ...r, waited } : r;
    // Someone's text in the box: off the lane (their keys go on), until the box is empty or the wait is over.
    const why = typingWords(r.typing);
    if (waited === undefined) {
      waited = why;
      opts.onWait?.(why);
    }
    let box: string | null = r.typing;
    while (box !== '' && box !== null && Date.now() < deadline) {
      await sleep(EMPTY_POLL_MS);
      box = await readBox();
    }
    if (box !== '' && box !== null) return { delivered: false, reason: `the agent's input box still holds "${box}", which someone is typing, after ${Math.round((opts.waitMs ?? EMPTY_BOX_WAIT_MS) / 1000)} s of waiting for it to be empty: the prompt was not typed` };
  }
}

/**
 * Why a held prompt cannot be typed into the pane now, or null when it can: the agent's input box is on
 * screen and empty (or holds only its own restored text, which the lane clears). Read before a held
 * prompt is taken off the timeline, so a dialog or someone's typing keeps it held, said why, and the pane
 * watcher tries again when the screen changes (never a delivery that fails and loses its place).
 */
export async function boxNotReady(adapter: HarnessAdapter, target: PaneTarget, state: SessionState, restored: readonly string[]): Promise<string | null> {
  if (!adapter.inputBox) return null;
  const box = adapter.inputBox((await capturePane(target, { ansi: true })).text);
  if (box === '' || (box !== null && adapter.clearInputKeys && isRestored(box, restored))) return null;
  if (box !== null) return typingWords(box);
  const dialog = adapter.dialogOnScreen?.((await capturePane(target)).text)?.detail ?? 'no input box on screen';
  return `session ${state.id}'s agent shows a dialog (${dialog}), not its input box`;
}

/** Reads until `ok` holds or SETTLE_MS pass; the last reading. */
async function settle(read: () => Promise<string | null>, ok: (v: string | null) => boolean): Promise<string | null> {
  const deadline = Date.now() + SETTLE_MS;
  let v = await read();
  while (!ok(v) && Date.now() < deadline) {
    await sleep(POLL_MS);
    v = await read();
  }
  return v;
}
