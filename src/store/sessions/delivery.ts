import { setTimeout as sleep } from 'node:timers/promises';
import type { SessionState } from '../../projections/index.js';
import type { HarnessAdapter } from './adapters/adapter.js';
import { capturePane } from './pane-capture.js';
import type { InputLanes } from './input-queue.js';
import { inLane } from './pane-input.js';
import type { PaneTarget } from './pane-target.js';

/** Whether a prompt reached the pane, and why not when it did not (it is on the timeline either way). */
export type Delivery =
  | { readonly delivered: true; /** What the lane did first: the text it cleared from the input box. */ readonly cleared?: string }
  | { readonly delivered: false; readonly reason: string };

/** How long the input box may take to show what was cleared or pasted. */
const SETTLE_MS = 2_000;
const POLL_MS = 80;

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

/**
 * Types a prompt into an agent whose input box can be read (DESIGN.md §9, one input lane): on the lane,
 * the box must be on screen (else a dialog has the keyboard: not delivered, said so); a text left in it
 * (the prompt the agent restored after Esc, or a person's typing) is cleared first and said in `cleared`,
 * or the delivery waits; after the paste the box must show the text before Enter confirms it, else a
 * dialog took it: not delivered, with the reason. Never a paste on top of other text, never a blind Enter.
 */
export function deliverChecked(lanes: InputLanes, adapter: HarnessAdapter, target: PaneTarget, state: SessionState, text: string): Promise<Delivery> {
  const readBox = async () => adapter.inputBox!((await capturePane(target, { ansi: true })).text);
  const dialogNow = async () => adapter.dialogOnScreen?.((await capturePane(target)).text)?.detail ?? 'no input box on screen';
  return inLane(lanes, target, async (lane): Promise<Delivery> => {
    let box = await readBox();
    if (box === null) return { delivered: false, reason: `session ${state.id}'s agent shows a dialog (${await dialogNow()}), not its input box: the prompt was not typed` };
    let cleared: string | undefined;
    if (box !== '') {
      if (!adapter.clearInputKeys) return { delivered: false, reason: `session ${state.id}'s input box already holds "${box}": the prompt waits until it is empty` };
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
    await lane.keys(['Enter']);
    return cleared === undefined ? { delivered: true } : { delivered: true, cleared };
  });
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
