import { describe, expect, it } from 'vitest';
import { WaitAnswers, type Delivery } from './wait-answers.js';

const open = (a: WaitAnswers<null>, wait = 'w1') => a.open({ wait, project: 'p', session: 's', options: ['Yes', 'No'] });

describe('a wait answered from notifications: exactly once', () => {
  it('two answers at the same moment (two devices): one reaches the agent, the other is told whose won', async () => {
    let calls = 0;
    let release!: () => void;
    const a = new WaitAnswers<null>(() => {
      calls++;
      return new Promise<Delivery>((r) => (release = () => r({ taken: true, state: 'running', says: 'the agent is working' })));
    });
    open(a);
    const first = a.answer('w1', 'Yes', 'ntfy', null);
    const second = a.answer('w1', 'No', 'a notification', null).then(
      () => 'answered',
      (e: Error) => e.message,
    );
    expect(await second).toBe('already being answered: Yes, from ntfy');
    release();
    expect(await first).toMatchObject({ option: 'Yes', from: 'ntfy', state: 'running', message: 'answered "Yes" from ntfy: the agent is working' });
    await expect(a.answer('w1', 'Yes', 'a notification', null)).rejects.toThrow(/^already answered: Yes, from ntfy at \d\d:\d\d$/);
    expect(calls).toBe(1);
  });

  it('an answer the dialog did not take leaves the wait open: the next one is tried', async () => {
    const results: Delivery[] = [{ taken: false, why: 'the selection did not reach "No"' }, { taken: true, state: 'running', says: 'the agent is working' }];
    const a = new WaitAnswers<null>(async () => results.shift()!);
    open(a);
    await expect(a.answer('w1', 'No', 'ntfy', null)).rejects.toThrow('not answered: the selection did not reach "No"; the wait is still open');
    expect(a.get('w1')?.open).toBe(true);
    await expect(a.answer('w1', 'Yes', 'ntfy', null)).resolves.toMatchObject({ option: 'Yes' });
    expect(a.get('w1')?.open).toBe(false);
  });

  it('tokens: bound to their wait and option, refused when cut or made up; an ended wait takes none', async () => {
    const a = new WaitAnswers<null>(async () => ({ taken: true, state: 'running', says: 'the agent is working' }));
    open(a, 'w1');
    open(a, 'w2');
    const yes1 = a.mint('w1', 'Yes', 'ntfy');
    const no2 = a.mint('w2', 'No', 'a webhook link');
    expect(yes1).toMatch(/^[\w-]{43}$/);
    expect(a.mint('w1', 'Yes', 'ntfy')).not.toBe(yes1);
    expect(() => a.mint('w1', 'Maybe', 'ntfy')).toThrow();
    expect(a.optionOfToken('w1', yes1)).toEqual({ option: 'Yes', from: 'ntfy' });
    expect(() => a.optionOfToken('w2', yes1)).toThrow(/another wait's/);
    expect(() => a.optionOfToken('w1', yes1.slice(0, 42))).toThrow(/cut short/);
    expect(() => a.optionOfToken('w1', `${yes1}x`)).toThrow(/not a token this gateway makes/);
    expect(() => a.optionOfToken('w1', 'A'.repeat(43))).toThrow(/not one this gateway made/);
    a.end('w2');
    await expect(a.answer('w2', a.optionOfToken('w2', no2).option, 'a webhook link', null)).rejects.toThrow(/^this wait ended at \d\d:\d\d/);
  });
});
