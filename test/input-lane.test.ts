import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { initialSession } from '../src/projections/session.js';
import { claudeAdapter } from '../src/store/sessions/adapters/claude.js';
import { deliverChecked } from '../src/store/sessions/delivery.js';
import { InputLanes } from '../src/store/sessions/input-queue.js';
import { cleanupRepos, ROOT, tempDir } from './helpers/repo.js';
import { testTmux } from './helpers/tmux.js';
import { waitFor } from './helpers/sessions.js';

/*
 * The input lane against a real tmux pane (a stand-in screen drawn as Claude Code's input box is read,
 * test/agents/input-box-standin.mjs): a prompt is pasted only into an empty box, text left in it is
 * cleared first and said, and a dialog that takes the screen as the paste lands stops the Enter.
 */

const home = tempDir();
const tmux = testTmux(home);
afterAll(() => {
  tmux.kill();
  cleanupRepos();
});

async function pane(mode: string): Promise<{ target: { socket: string; session: string; pane: string }; received: () => string; submitted: () => string }> {
  const id = `lane-${mode}`;
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
    expect(await deliverChecked(lanes, claudeAdapter, p.target, state, 'ACC-HELD')).toEqual({ delivered: true, cleared: 'restored text' });
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
});
