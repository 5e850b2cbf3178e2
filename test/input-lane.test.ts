import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { initialSession } from '../src/projections/session.js';
import { claudeAdapter } from '../src/store/sessions/agents/claude/claude.js';
import { deliverChecked } from '../src/store/sessions/verbs/delivery.js';
import { InputLanes } from '../src/store/sessions/tmux/input-queue.js';
import { sendBytes } from '../src/store/sessions/tmux/pane-input.js';
import { cleanupRepos, ROOT, tempDir } from './helpers/repo.js';
import { testTmux } from './helpers/tmux.js';
import { waitFor } from './helpers/sessions.js';

/*
 * The input lane against a real tmux pane (a stand-in screen drawn as Claude Code's input box is read,
 * test/agents/input-box-standin.mjs): a prompt is pasted only into an empty box, text left in it is
 * cleared first and said, text someone types is waited for (never pasted into), keys from another process
 * wait for a prompt being typed, and a dialog that takes the screen as the paste lands stops the Enter.
 */

const home = tempDir();
const tmux = testTmux(home);
afterAll(() => {
  tmux.kill();
  cleanupRepos();
});

let panes = 0;
async function pane(mode: string): Promise<{ target: { socket: string; session: string; pane: string }; received: () => string; submitted: () => string }> {
  const id = `lane-${mode}-${++panes}`;
  const out = join(home, `${id}.bytes`);
  await tmux.session(id, `${JSON.stringify(process.execPath)} ${JSON.stringify(resolve(ROOT, 'test/agents/input-box-standin.mjs'))} ${JSON.stringify(out)} ${mode}`);
  await waitFor('the stand-in drawn', () => /❯/.test(tmux.run('capture-pane', '-p', '-t', `=${id}:`)));
  const read = (f: string) => (existsSync(f) ? readFileSync(f, 'utf8') : '');
  return { target: { socket: tmux.socket, session: id, pane: tmux.display(id, '#{pane_id}').trim() }, received: () => read(out), submitted: () => read(`${out}.submitted`) };
}

const state = initialSession('s-lane');
const lanes = new InputLanes();

describe('one checked input lane', () => {
  it('an empty box: pasted, seen in the box, then Enter', async () => {
    const p = await pane('empty');
    expect(await deliverChecked(lanes, claudeAdapter, p.target, state, 'hello lane')).toEqual({ delivered: true });
    await waitFor('the submitted line', () => p.submitted() === 'hello lane\n');
  });

  it('text left in the box (a prompt restored after Esc) is cleared first and said; the agent receives exactly the prompt', async () => {
    const p = await pane('restored');
    expect(await deliverChecked(lanes, claudeAdapter, p.target, state, 'ACC-HELD', { restored: ['restored text'] })).toEqual({ delivered: true, cleared: 'restored text' });
    await waitFor('the submitted line', () => p.submitted() !== '');
    expect(p.submitted()).toBe('ACC-HELD\n');
  });

  it('a dialog on screen: nothing typed, not delivered, said so', async () => {
    const p = await pane('dialog');
    const r = await deliverChecked(lanes, claudeAdapter, p.target, state, 'never typed');
    expect(r).toEqual({ delivered: false, reason: expect.stringMatching(/shows a dialog \(permission: .*\), not its input box: the prompt was not typed$/) });
    expect(p.received()).toBe('');
  });

  it('a dialog that takes the screen as the paste lands: no Enter follows, not delivered, said so', async () => {
    const p = await pane('dialog-on-paste');
    const r = await deliverChecked(lanes, claudeAdapter, p.target, state, 'mid-delivery');
    expect(r).toEqual({ delivered: false, reason: expect.stringMatching(/^a dialog appeared as the prompt was pasted \(permission: .*\): the prompt was not confirmed$/) });
    expect(p.received()).toContain('mid-delivery');
    expect(p.received()).not.toContain('\r');
    expect(p.submitted()).toBe('');
  });

  /*
   * One lane for every input (issue 41): what a person types into the box (a viewer's keystrokes, a key
   * command) is theirs. Before, a held prompt cleared it (or, racing, was pasted onto it: the real Claude
   * Code answered "Unknown command: /clearhello ACC-NOTYPE").
   */
  const boxShows = (p: { target: { session: string } }, text: string) => tmux.run('capture-pane', '-p', '-t', `=${p.target.session}:`).includes(`❯ ${text}`);

  it('a person typing in the box: the prompt waits for an empty box, says so, and is delivered alone once they submit', async () => {
    const p = await pane('empty');
    await sendBytes(lanes, p.target, Buffer.from('/clear'));
    await waitFor('the typed text in the box', () => boxShows(p, '/clear'));
    let said: string | undefined;
    const delivery = deliverChecked(lanes, claudeAdapter, p.target, state, 'hello ACC-NOTYPE', { restored: [], waitMs: 20_000, onWait: (why) => (said = why) });
    await waitFor('the prompt to say it waits', () => said, 10_000);
    expect(said).toBe('the agent\'s input box holds "/clear", which someone is typing: the prompt waits for an empty box (submit or clear that text)');
    expect(p.received()).toBe('/clear');
    await sendBytes(lanes, p.target, Buffer.from('\r'));
    expect(await delivery).toEqual({ delivered: true, waited: said });
    await waitFor('both lines submitted', () => p.submitted().split('\n').length === 3);
    expect(p.submitted()).toBe('/clear\nhello ACC-NOTYPE\n');
  });

  it('a person who clears what they typed: the prompt then goes in alone', async () => {
    const p = await pane('empty');
    await sendBytes(lanes, p.target, Buffer.from('half a tho'));
    await waitFor('the typed text in the box', () => boxShows(p, 'half a tho'));
    let said: string | undefined;
    const delivery = deliverChecked(lanes, claudeAdapter, p.target, state, 'ACC-ALONE', { waitMs: 20_000, onWait: (why) => (said = why) });
    await waitFor('the prompt to say it waits', () => said, 10_000);
    await sendBytes(lanes, p.target, Buffer.from('\x15'));
    expect(await delivery).toMatchObject({ delivered: true, waited: expect.stringContaining('"half a tho"') });
    await waitFor('the prompt submitted', () => p.submitted() !== '');
    expect(p.submitted()).toBe('ACC-ALONE\n');
  });

  it('text still in the box when the wait is over: not delivered, said so, nothing pasted', async () => {
    const p = await pane('empty');
    await sendBytes(lanes, p.target, Buffer.from('mine'));
    await waitFor('the typed text in the box', () => boxShows(p, 'mine'));
    expect(await deliverChecked(lanes, claudeAdapter, p.target, state, 'never pasted', { waitMs: 1_000 })).toEqual({ delivered: false, reason: 'the agent\'s input box still holds "mine", which someone is typing, after 1 s of waiting for it to be empty: the prompt was not typed' });
    expect(p.received()).toBe('mine');
  });

  it('keys from another process (the serve, a viewer) wait while a prompt is being typed: they never land inside it', async () => {
    const p = await pane('empty');
    // Another process's delivery holds the session's lane (pane-input.ts: a tmux wait-for lock) and types.
    const channel = `trellis-lane-${p.target.session}`;
    tmux.run('wait-for', '-L', channel);
    const keys = sendBytes(new InputLanes(), p.target, Buffer.from('abc'));
    // Either the keys went (the bug: nothing held them) or they wait for the lane (a tmux client asking for its lock).
    const waiting = () => execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).split('\n').some((l) => l.includes(tmux.socket) && l.includes(`wait-for -L ${channel}`));
    await Promise.race([keys, waitFor('the keys to wait for the lane', waiting)]);
    tmux.run('send-keys', '-t', p.target.pane, '-l', 'PROMPT');
    await waitFor('the prompt typed', () => p.received().includes('PROMPT'));
    tmux.run('wait-for', '-U', channel);
    await keys;
    await waitFor('the keys typed', () => p.received().includes('abc'));
    expect(p.received()).toBe('PROMPTabc');
  });
});
