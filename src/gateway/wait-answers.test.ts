import { describe, expect, it } from 'vitest';
import { WaitAnswers, type Delivery } from './wait-answers.js';

const SINCE = '2026-11-27T14:00:00.000Z';
const open = (a: WaitAnswers<null>, wait = 'w1') => a.open({ wait, project: 'p', session: 's', since: SINCE, options: ['Yes', 'No'] });

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

  it("answered where this gateway did not see it (the page, the CLI, another device): every later tap is told by the session's record, before and after the wait ends", async () => {
    let delivered = 0;
    const asked: string[] = [];
    const onRecord = async (w: { session: string; since: string }) => {
      asked.push(`${w.session}@${w.since}`);
      return { option: 'Yes', from: 'the page', at: '14:02' };
    };
    // Before the gateway saw the wait end: the backend finds the answer on record and types nothing.
    const a = new WaitAnswers<null>(async () => {
      delivered++;
      return { taken: false, already: { option: 'Yes', from: 'the page', at: '14:02' } };
    }, onRecord);
    open(a);
    await expect(a.answer('w1', 'No', 'a notification', null)).rejects.toThrow(/^already answered: Yes, from the page at 14:02$/);
    await expect(a.answer('w1', 'Yes', 'ntfy', null)).rejects.toThrow(/^already answered: Yes, from the page at 14:02$/);
    expect(delivered).toBe(1);
    // After it ended: the session's record is read once, remembered, and said to every tap.
    const b = new WaitAnswers<null>(async () => {
      delivered++;
      return { taken: true, state: 'running', says: 'the agent is working' };
    }, onRecord);
    open(b);
    b.end('w1');
    await expect(b.answer('w1', 'Yes', 'a notification', null)).rejects.toThrow(/^already answered: Yes, from the page at 14:02$/);
    await expect(b.answer('w1', 'No', 'ntfy', null)).rejects.toThrow(/^already answered: Yes, from the page at 14:02$/);
    expect(await b.answeredOf('w1')).toEqual({ option: 'Yes', from: 'the page', at: '14:02' });
    expect([delivered, asked]).toEqual([1, [`s@${SINCE}`]]);
    // Nothing on record: the agent moved on.
    const c = new WaitAnswers<null>(async () => ({ taken: true, state: 'running', says: '' }), async () => null);
    open(c);
    c.end('w1');
    await expect(c.answer('w1', 'Yes', 'ntfy', null)).rejects.toThrow(/^this wait ended at \d\d:\d\d \(the agent moved on\): nothing was answered$/);
    expect(await c.answeredOf('w1')).toBeUndefined();
  });
});
