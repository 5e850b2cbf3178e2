import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, ok, tempRepo, trellis } from './helpers/repo.js';

afterAll(cleanupRepos);

/**
 * Issue 19, row 8: text a user, an agent or a forge wrote reaches the terminal with its control
 * characters made visible; `--json` carries them exactly.
 */
const ESC = '\u001b';
const CSI = '\u009b';
// Recolours, clears the screen, sets the window title, returns the cursor to overwrite a line.
const HOSTILE = `${ESC}[31mred${ESC}[2J${ESC}]0;pwned\u0007 ${CSI}1m\rfake\b`;
// Any byte a terminal acts on: C0 but newline and tab, DEL, C1.
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe('terminal escape injection: human output shows control characters, --json keeps them', async () => {
  const dir = tempRepo();
  await ok(dir, ['init']);
  mkdirSync(join(dir, 'specs', 'evil'), { recursive: true });
  writeFileSync(join(dir, 'specs', 'evil', 'node.md'), `---\ntitle: "Title ${'\\e'}[31m red ${'\\x9b'}"\n---\n# x\n`);
  const id = (await ok(dir, ['issue', 'open', `concern ${HOSTILE}`, '--body', `body ${HOSTILE}\nsecond line\tcolumn`, '--node', 'evil/node'])).trim();
  await ok(dir, ['issue', 'reply', id, '--body', `reply ${HOSTILE}`, '--by', `agent${ESC}[8m`]);

  const cases: { name: string; args: string[]; shows: string[] }[] = [
    { name: 'issue show', args: ['issue', 'show', id], shows: ['concern \\x1b[31mred', 'body \\x1b[31m', 'reply \\x1b[31m', '\\x9b1m', '\\rfake\\b', 'agent\\x1b[8m'] },
    { name: 'issue ls', args: ['issue', 'ls'], shows: ['concern \\x1b[31mred\\x1b[2J\\x1b]0;pwned\\x07'] },
    { name: 'issues', args: ['issues'], shows: ['concern \\x1b[31mred'] },
    { name: 'board', args: ['board'], shows: ['Title \\x1b[31m red \\x9b'] },
  ];
  it.each(cases)('$name: no raw control character reaches the terminal, each is shown', async ({ args, shows }) => {
    const r = await trellis(dir, args);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(RAW_CONTROL);
    for (const s of shows) expect(r.stdout).toContain(s);
  });

  it('newline and tab, which the layout needs, stay as they are', async () => {
    const r = await trellis(dir, ['issue', 'show', id]);
    expect(r.stdout).toContain('\nsecond line\tcolumn\n');
  });

  it('--json stays exact: the parsed text is the text written, control characters and all', async () => {
    const issue = JSON.parse(await ok(dir, ['issue', 'show', id, '--json']));
    expect(issue.concern).toBe(`concern ${HOSTILE}`);
    expect(issue.body).toBe(`body ${HOSTILE}\nsecond line\tcolumn`);
    expect(issue.replies[0].body).toBe(`reply ${HOSTILE}`);
    expect(issue.replies[0].by).toBe(`agent${ESC}[8m`);
    const list = JSON.parse(await ok(dir, ['issues', '--json']));
    expect(list[0].concern).toBe(`concern ${HOSTILE}`);
    // graph is machine output without a flag: the C1 byte of the node title comes through unaltered.
    expect(await ok(dir, ['graph'])).toContain(CSI);
  });

  it('an error message that quotes user input is escaped too (stderr)', async () => {
    const r = await trellis(dir, [`nope${ESC}[2J`]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('\\x1b[2J');
    expect(r.stderr).not.toMatch(RAW_CONTROL);
  });
});
