import { describe, expect, it } from 'vitest';
import { cleanMessage, paneClosedWords, size, wordsFor, type PageAction } from './error-words';

/** Whatever the page shows: no CLI flag, trellis command, HTTP verb and path, JSON body or raw byte count. */
const SPEAKS_API = /--[a-z]|\btrellis [a-z]|\b(GET|POST|PUT|DELETE) \/|\{"|\d{5,} bytes|gitInit/;

describe('the page says API refusals in its own words (issue 34, deliverable 3)', () => {
  // The API's messages, verbatim, with the code, details and the action that met each.
  const rows: [string, { code: string; message: string; details?: Record<string, unknown> }, PageAction | undefined, RegExp, RegExp | null][] = [
    [
      'register a plain folder without the git choice',
      { code: 'INVALID_INPUT', message: '/tmp/x is not in a git repository with a working tree; send gitInit: true (trellis projects add --git) to create one there', details: { needs: 'gitInit' } },
      'register',
      /not in a git repository/,
      /Tick “Create a git repository here” and click Register again/,
    ],
    [
      'spawn with an agent that is not installed',
      { code: 'HARNESS_NOT_INSTALLED', message: "the claude harness runs 'claude', which is not installed here (not on PATH): install it with 'npm i -g x', or spawn with --harness shell", details: { harness: 'claude', program: 'claude' } },
      'spawn',
      /The claude agent \(claude\) is not installed on this machine/,
      /Pick another harness in the form \(shell is always there\)/,
    ],
    [
      'merge held back by the checks',
      {
        code: 'MERGE_BLOCKED',
        message: `merge of s1 refused by its checks: cart/tax (not measured at abc). Measure them with 'trellis session check s1', or override with a reason: trellis session merge s1 --override "<why>" (POST /api/sessions/s1/merge {"override": "<why>"})`,
        details: { blocking: [{ scenario: 'cart/tax', blocks: 'not measured at abc' }], changed: false },
      },
      'merge',
      /The checks hold this merge back: cart\/tax \(not measured at abc\)\./,
      /Run checks.*“Merge anyway, because”.*Merge again/,
    ],
    ['a 2 MB prompt', { code: 'PAYLOAD_TOO_LARGE', message: 'request bodies are limited to 1048576 bytes' }, 'prompt', /too long to send as a prompt/, /Attach it as a file: the agent gets a short prompt naming the file/],
    ['a 2 MB reply', { code: 'PAYLOAD_TOO_LARGE', message: 'request bodies are limited to 1048576 bytes' }, 'reply', /too long to send as a reply/, /Attach it as a file: the reply carries the whole text/],
    ['a wrong current password', { code: 'BAD_PASSWORD', message: 'the current admin password is wrong; nothing was changed' }, 'password', /current password is wrong/, /Type the password you log in with now/],
    ['a wrong login', { code: 'BAD_PASSWORD', message: 'wrong password' }, 'login', /That password is wrong/, /Try again/],
    [
      'checks with uncommitted work',
      { code: 'SESSION_REFUSED', message: "session s1's worktree has uncommitted changes (a.txt): the checks measure its head commit, so commit them first (git -C /w commit -am ...)", details: { uncommitted: ['a.txt'] } },
      undefined,
      /uncommitted changes \(a\.txt\)/,
      /Send a prompt.*Run checks again/,
    ],
    ['a write the server did not answer', { code: 'NETWORK', message: 'the backend did not answer POST api/issues: Failed to fetch; check whether it landed before retrying' }, 'reply', /may or may not have been saved/, /before trying again/],
    ['a login that ended', { code: 'UNAUTHENTICATED', message: 'log in first (POST /auth/login)' }, undefined, /not logged in/, /Log in again/],
    ['a gateway refusing the password route', { code: 'FORBIDDEN', message: "the admin password is set from the gateway's own page (a request with its Origin); on this machine's terminal, run 'trellis dashboard password'" }, 'password', /can only be set or changed from this page/, null],
    ['a login with no password set', { code: 'NO_PASSWORD', message: "no admin password is set; run 'trellis dashboard password' on this machine" }, 'login', /no admin password yet/, /set one under Password/],
  ];
  it.each(rows)('%s', (_name, error, action, message, next) => {
    const w = wordsFor(error, action);
    expect(w.message).toMatch(message);
    if (next) expect(w.next).toMatch(next);
    expect(`${w.message} ${w.next ?? ''}`).not.toMatch(SPEAKS_API);
  });

  it('an answer that is no error of ours says its status, not the request line', () => {
    const w = wordsFor({ code: 'HTTP_502', message: 'GET /fs answered 502', status: 502 });
    expect(w.message).toBe('The server could not do this (it answered 502).');
  });

  it('a serve that did not start: the page’s words, and the log tail left for the box to show whole', () => {
    const e = { code: 'SERVE_FAILED', message: 'the backend did not come online; the log tail says why', details: { logTail: 'Error: EADDRINUSE' } };
    expect(wordsFor(e)).toEqual({ message: 'The project’s server did not start.', next: 'The last lines of its log, below, say why.' });
    expect(wordsFor({ code: 'SERVE_FAILED', message: 'gpu could not start it: ssh: connect refused' }).message).toBe('Gpu could not start it: ssh: connect refused.');
  });

  it('only an oversized prompt or reply is offered as an attachment', () => {
    const e = { code: 'PAYLOAD_TOO_LARGE', message: 'request bodies are limited to 1048576 bytes' };
    expect([wordsFor(e, 'prompt').attach, wordsFor(e, 'reply').attach, wordsFor(e, 'upload').attach, wordsFor(e).attach]).toEqual([true, true, undefined, undefined]);
  });

  it('details a refusal does not carry leave the fallback, never a sentence with holes', () => {
    const w = wordsFor({ code: 'HARNESS_NOT_INSTALLED', message: "the codex harness runs 'codex', which is not installed here (not on PATH): install it with 'npm i -g @openai/codex', or spawn with --harness shell" }, 'spawn');
    expect(w.message).not.toMatch(/undefined|\?/);
    expect(w.message).not.toMatch(SPEAKS_API);
    expect(w.message).toMatch(/^The codex harness runs 'codex', which is not installed here/);
  });
});

describe('cleanMessage: the fallback for codes the page has no words for', () => {
  it.each([
    ['drops an aside that speaks CLI', 'x is not a folder (see trellis projects add --git)', 'X is not a folder.'],
    ['drops a clause with an HTTP route and JSON', 'the hook failed; retry with POST /api/sessions/x/merge {"override": "y"}', 'The hook failed.'],
    ['drops an "or <flag>" alternative', 'the program is missing, or spawn with --harness shell', 'The program is missing.'],
    ['says bytes as a size', 'request bodies are limited to 1048576 bytes', 'Request bodies are limited to 1 MB.'],
    ['keeps a message with nothing to drop, asides included', 'the worktree has uncommitted changes (scratch.txt)', 'The worktree has uncommitted changes (scratch.txt).'],
    ['keeps the first clause when every clause speaks API', 'send gitInit: true (trellis projects add --git)', 'Send gitInit: true.'],
  ])('%s', (_name, input, out) => {
    expect(cleanMessage(input)).toBe(out);
  });

  it('sizes read as people say them', () => {
    expect([size(512), size(1536), size(1 << 20), size(25 << 20), size(2.5 * 2 ** 30)]).toEqual(['512 bytes', '1.5 KB', '1 MB', '25 MB', '2.5 GB']);
  });
});

describe('the live terminal says its notices in the page’s words', () => {
  /** No code, close number, socket or API term: what happened and what to do. */
  const RAW = /\b[A-Z]+_[A-Z_]+\b|\b1\d{3}\b|\b4\d{3}\b|socket|mode=read|\?mode|control message/;
  it('each refusal the pane stream sends (session-io.ts), as the terminal card words it', () => {
    const refusals: [string, string, Record<string, unknown>, RegExp][] = [
      ['READ_ONLY', 'this viewer opened the session read-only (?mode=read); its input is refused', {}, /The terminal is read-only, so nothing was typed into it\..*Untick Read-only/],
      ['READ_ONLY', 'a read-only viewer cannot resize the session', { viewOnly: true }, /Your login may watch this terminal but not type into it.*admin password/],
      ['READ_ONLY', 'uploaded to /u/a.txt, but nothing was typed', { file: 'a.txt' }, /the file a\.txt was uploaded, but its path was not typed/],
      ['PANE_NOT_LIVE', 'uploaded to /u/a.txt, but nothing was typed', { file: 'a.txt' }, /uploaded, but the terminal is not connected.*once the terminal shows live/],
      ['INVALID_INPUT', 'unknown control message: type must be "input"', {}, /did not understand what this page sent.*Reload the page/],
      ['INPUT_FAILED', "can't find pane %3", {}, /What was typed did not reach the session’s terminal/],
      ['RESIZE_FAILED', 'tmux: resize-window failed', {}, /could not be resized to fit this screen/],
    ];
    for (const [code, message, details, want] of refusals) {
      const w = wordsFor({ code, message, details }, 'terminal');
      const said = `${w.message} ${w.next ?? ''}`;
      expect(said, code).toMatch(want);
      expect(said, code).not.toMatch(RAW);
    }
  });
  it('each close code of the pane stream, and any other drop', () => {
    const said = [1000, 1011, 1012, 4001, 1006].map((c) => paneClosedWords(c)).map((w) => `${w.message} ${w.next ?? ''}`);
    expect(said[0]).toBe('The session ended, so its terminal closed. ');
    expect(said[2]).toBe('The project’s server is restarting. The terminal reconnects by itself in a moment.');
    expect(said[3]).toMatch(/too far behind.*reconnects by itself/);
    expect(said[4]).toMatch(/The connection to the terminal dropped/);
    for (const t of said) expect(t).not.toMatch(RAW);
  });
});
