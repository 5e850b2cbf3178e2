import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { answerGoesOn, dialogOptions, optionNamed } from './dialog-options.js';

const RECORDINGS = join(import.meta.dirname, '../../../../test/agents/recordings');
const screen = (name: string) => readFileSync(join(RECORDINGS, name), 'utf8');

describe('dialog options read from the real screens', () => {
  it("2.1.331's trust dialog: 'No, exit' is selected; trust names the other option", () => {
    const d = dialogOptions(screen('claude-2.1.331-screen-trust.txt'))!;
    expect(d).toEqual({ options: ['No, exit', 'Yes, I trust this folder'], selected: 0 });
    expect(optionNamed(d.options, 'trust')).toBe(1);
    expect(optionNamed(d.options, 'deny')).toBe(0);
  });

  it("2.1.331's reworded Bash dialog: its default is No; approve is Yes", () => {
    const d = dialogOptions(screen('claude-2.1.331-screen-bash-approval.txt'))!;
    expect(d).toEqual({ options: ['No', 'Yes'], selected: 0 });
    expect(optionNamed(d.options, 'approve')).toBe(1);
  });

  it('a question: numbered options with descriptions under them, chosen by their text', () => {
    const d = dialogOptions(screen('claude-2.1.331-screen-ask.txt'))!;
    expect(d.options.slice(0, 3)).toEqual(['Red', 'Blue', 'Type something.']);
    expect(d.selected).toBe(0);
    expect(optionNamed(d.options, 'blue')).toBe(1);
    expect(optionNamed(d.options, 'Green')).toBeNull();
  });

  it("2.1.197's numbered permission dialog; the input box's prompt is no dialog", () => {
    const d = dialogOptions(' Do you want to proceed?\n ❯ 1. Yes\n   2. Yes, and don’t ask again for touch commands\n   3. No\n\n Esc to cancel')!;
    expect(d).toEqual({ options: ['Yes', 'Yes, and don’t ask again for touch commands', 'No'], selected: 0 });
    expect(optionNamed(d.options, 'deny')).toBe(2);
    expect(dialogOptions(screen('claude-2.1.331-screen-after-esc.txt'))).toBeNull();
  });
});

describe('answerGoesOn: whether an answer lets the agent go on (its own signal then ends the turn, not the screen)', () => {
  it.each([
    ['question', 'Blue', true],
    ['question', 'No', true],
    ['question', 'cancel (Escape)', false],
    ['permission', 'Yes', true],
    ['permission', 'Yes, and don’t ask again for touch commands', true],
    ['permission', 'approve (Enter)', true],
    ['permission', 'No', false],
    ['permission', 'No, and tell Claude what to do differently', false],
    ['permission', 'deny (Escape)', false],
    ['dialog', 'Yes', false],
  ] as const)('%s answered %j: %s', (reason, chose, goesOn) => {
    expect(answerGoesOn(reason, chose)).toBe(goesOn);
  });
});
