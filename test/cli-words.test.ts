/**
 * The CLI's words when a person mistypes (issue 44, item 5), through the real `trellis` process: an id one
 * character off or cut short is answered with the nearest ids (issues and sessions, one rule); a mistyped
 * command or action with the nearest one; an unknown option with one line and the usage of the verb as
 * typed, not of every action; and a transition says each thing once (`<id> closed`, not `closed: closed`).
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cleanupRepos, ok, tempRepo, testEnv, trellis } from './helpers/repo.js';
import { killTmux } from './helpers/sessions.js';

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) killTmux(h);
});
afterAll(cleanupRepos);

/** `id` with its last character changed: one edit away. */
const oneOff = (id: string) => `${id.slice(0, -1)}${id.endsWith('x') ? 'y' : 'x'}`;

describe('trellis names the nearest id', () => {
  it('an issue id one character off, or cut short, is refused naming the issue it is nearest; an id near nothing names none', async () => {
    const dir = tempRepo();
    const id = (await ok(dir, ['issue', 'open', 'Login forgets the email'])).trim();
    for (const args of [
      ['issue', 'show', oneOff(id)],
      ['issue', 'show', id.slice(0, 6)],
      ['issue', 'timeline', oneOff(id)],
      ['issue', 'reply', oneOff(id), '--body', 'x'],
      ['issue', 'close', oneOff(id)],
      ['issue', 'reopen', oneOff(id)],
    ]) {
      const r = await trellis(dir, args);
      expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 1, stderr: `trellis: no issue ${args[2]}; did you mean '${id}'?\n` });
    }
    // Nothing was written by the refused writes.
    expect(JSON.parse(await ok(dir, ['issue', 'show', id, '--json']))).toMatchObject({ status: 'open', replies: [] });
    expect(await trellis(dir, ['issue', 'show', 'zzzzzzzzzzzz'])).toMatchObject({ code: 1, stderr: 'trellis: no issue zzzzzzzzzzzz\n' });
  });

  it('a session id one character off is refused naming the session it is nearest, by the same rule', async () => {
    const dir = tempRepo();
    homes.push(testEnv(dir).TRELLIS_HOME!);
    const id = (await ok(dir, ['session', 'spawn', 'tidy up', '--harness', 'shell'])).trim();
    for (const action of ['show', 'close', 'interrupt']) {
      const r = await trellis(dir, ['session', action, oneOff(id)]);
      expect({ action, code: r.code, stderr: r.stderr }).toEqual({ action, code: 1, stderr: `trellis: no session ${oneOff(id)}; did you mean '${id}'?\n` });
    }
    expect(await trellis(dir, ['review', id.slice(0, 5)])).toMatchObject({ code: 1, stderr: `trellis: no session ${id.slice(0, 5)}; did you mean '${id}'?\n` });
    expect(await trellis(dir, ['session', 'show', 'zzzzzzzzzzzz'])).toMatchObject({ code: 1, stderr: "trellis: no session zzzzzzzzzzzz; 'trellis session ls --all' lists them\n" });

    // Each thing said once: `<id> closed`, not `<id> closed: closed`.
    expect(await ok(dir, ['session', 'close', id])).toBe(`${id} closed\n`);
  });
});

describe('trellis names the nearest command, action and option', () => {
  it('a mistyped command or action: exit 2, the nearest named, and the usage of the one meant', async () => {
    const dir = tempRepo();
    const cases: [string[], string][] = [
      [['isue', 'ls'], "trellis: unknown command 'isue'; did you mean 'issue'?\nusage: trellis <command> [options]   (trellis --help lists the commands)\n"],
      [['sesion'], "trellis: unknown command 'sesion'; did you mean 'session'?\nusage: trellis <command> [options]   (trellis --help lists the commands)\n"],
      [['issue', 'shwo', 'x'], "trellis: unknown issue action 'shwo'; did you mean 'show'?\nusage: trellis issue show <id> [--json]\n"],
      [['session', 'clsoe', 'x'], "trellis: unknown session action 'clsoe'; did you mean 'close'?\nusage: trellis session close <id> [--by <author>] [--json]\n"],
      [['evidence', 'gt', 'x'], "trellis: unknown evidence action 'gt'; did you mean 'get'?\nusage: trellis evidence get <hash> [--range <start>-<end>]\n"],
    ];
    for (const [args, stderr] of cases) expect({ args, ...(await trellis(dir, args)) }).toMatchObject({ args, code: 2, stdout: '', stderr });
  });

  it('an unknown option: one line, then the usage of the verb as typed (not every action of the command)', async () => {
    const dir = tempRepo();
    const cases: [string[], string][] = [
      [['session', 'ls', '--bogus'], "trellis: unknown option '--bogus'\nusage: trellis session ls [--all] [--json]\n"],
      [['issue', 'ls', '--jsn'], "trellis: unknown option '--jsn'; did you mean '--json'?\nusage: trellis issue ls [--node <id>] [--store <store>] [--all] [--json]\n"],
      [['board', '--bogus'], "trellis: unknown option '--bogus'\nusage: trellis board [--json]\n"],
      [['sync', '--push-onyl'], "trellis: unknown option '--push-onyl'; did you mean '--push-only'?\nusage: trellis sync [remote] [--push-only] [--fetch-only] [--json]\n"],
    ];
    for (const [args, stderr] of cases) expect({ args, ...(await trellis(dir, args)) }).toMatchObject({ args, code: 2, stdout: '', stderr });
  });
});
