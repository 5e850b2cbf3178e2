import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { screenshot, VIEWPORTS, desktopPage } from './helpers/browser.js';
import { screens34 as shots } from './helpers/screens-34.js';
import { cleanupRepos, git, ok, tempDir, testEnv } from './helpers/repo.js';
import { packageCopy, startServe, type ServeProcess } from './helpers/serve.js';
import { demoRepo } from './helpers/server.js';
import { killTmux, tmux, tmuxHas } from './helpers/sessions.js';

// The dashboard's Sessions, Session and Eval views in a real Chromium against a real `trellis serve`,
// with agent sessions in a real tmux on this test's own socket (<home>/tmux.sock).

const SCENARIO = 'ops/dashboard/smoke';

let dir: string;
let home: string;
let uploads: string;
let pkg: string;
let s: ServeProcess;
let browser: Browser;
let page: Page;
let seen: { dialogs: string[]; errors: string[] };
let sessionId: string;

// The CLI is set up as the serve is: a confined pane it relaunches (\`session resume\`) mounts the uploads
// folder its launcher names, which must be the one the serve stores pasted files in.
const cli = (...args: string[]) => ok(dir, args, { env: { TRELLIS_HOME: home, TRELLIS_UPLOADS_DIR: uploads } });
const open = async (hash: string) => {
  await page.goto(new URL(hash, s.url).href);
  await page.getByTestId('link-state').filter({ hasText: 'live' }).waitFor({ timeout: 10_000 });
};
/** The terminal's rows as xterm's DOM renderer shows them, right-trimmed. */
const rows = () => page.locator('.xterm-rows > div').evaluateAll((els) => els.map((e) => (e.textContent ?? '').replace(/\s+$/, '')));
/** Whether some row of the terminal is exactly `text` (the output line, not the command that printed it). */
const showsLine = async (text: string) => (await rows()).includes(text);
/** Session `id` as the serve shows it (GET /api/sessions/:id: the same showSession as `trellis session show
 * --json`), read over HTTP where a poll or a setup step needs it: no CLI process per look. */
const shownOver = async (id: string) => (await (await fetch(new URL(`/api/sessions/${encodeURIComponent(id)}`, s.url))).json()) as { unread: boolean; state: string; worktree: string; timeline: { body: string }[] };
const paneState = () => page.getByTestId('pane-state').textContent({ timeout: 1_000 });
const typeInTerminal = async (text: string) => {
  await page.locator('.terminal-frame .xterm').click();
  await page.keyboard.type(text);
};

beforeAll(async () => {
  dir = await demoRepo();
  home = tempDir();
  uploads = tempDir();
  // One declared eval scenario, so the scoreboard has a row for a CLI reading.
  mkdirSync(join(dir, 'specs/ops'), { recursive: true });
  writeFileSync(join(dir, 'specs/ops/dashboard.md'), `---\ntitle: Dashboard smoke\nscenarios:\n  - id: ${SCENARIO}\n    run: "true"\n---\n# Dashboard smoke\n\nThe page loads.\n`);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'a scenario');
  pkg = packageCopy();
  s = await startServe(pkg, dir, { ...testEnv(dir), TRELLIS_HOME: home, TRELLIS_UPLOADS_DIR: uploads, TRELLIS_DRAIN_MS: '300' });
  ({ browser, page, seen } = await desktopPage());
});

afterAll(async () => {
  await browser?.close();
  await s?.stop('SIGKILL');
  killTmux(home);
  cleanupRepos();
});

describe('sessions in the dashboard', () => {
  it('spawns a shell session from the page; `echo hello` typed into its terminal shows on the page and in `trellis session capture`', async () => {
    const scripts: string[] = [];
    page.on('request', (r) => r.resourceType() === 'script' && scripts.push(new URL(r.url()).pathname));
    await open('#/sessions');
    await page.getByTestId('no-sessions').waitFor();
    // xterm.js is a chunk of its own, loaded by the session page only.
    expect(scripts.filter((p) => /xterm/.test(p))).toEqual([]);
    await page.getByLabel('Harness').selectOption('shell');
    await page.getByLabel('Task').fill('Try the terminal\nfrom the dashboard');
    await page.getByLabel('Nodes (space separated)').fill('checkout/payment');
    await page.getByRole('button', { name: 'Spawn' }).click();
    await expect.poll(() => page.url()).toMatch(/#\/sessions\/[^/]+$/);
    sessionId = decodeURIComponent(/#\/sessions\/(.+)$/.exec(page.url())![1]!);
    expect(tmuxHas(home, sessionId)).toBe(true);
    await expect.poll(() => paneState(), { timeout: 10_000 }).toBe('live');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Try the terminal');
    expect(scripts.filter((p) => /\/assets\/xterm-terminal-[^/]+\.js$/.test(p))).toHaveLength(1);

    await typeInTerminal('echo hello');
    await page.keyboard.press('Enter');
    await expect.poll(() => showsLine('hello'), { timeout: 15_000 }).toBe(true);
    // xterm's theme applies under the page's CSP (no inline styles): light text, ANSI colors.
    expect(await page.locator('.xterm-rows').evaluate((e) => getComputedStyle(e).color)).toBe('rgb(255, 255, 255)');
    await typeInTerminal("printf '\\033[31m%s\\033[0m\\n' red-text");
    await page.keyboard.press('Enter');
    await expect.poll(() => showsLine('red-text'), { timeout: 15_000 }).toBe(true);
    const [r, g, b] = (await page.locator('.xterm-rows span', { hasText: /^red-text$/ }).evaluate((e) => getComputedStyle(e).color)).match(/\d+/g)!.map(Number);
    expect(r! > 150 && g! < 80 && b! < 80).toBe(true);
    const captured = await cli('session', 'capture', sessionId);
    expect(captured.split('\n').map((l) => l.trimEnd())).toContain('hello');
    // The writable viewer sized the pane to its frame; a smaller window makes a smaller pane.
    const paneSize = () => tmux(home, 'display-message', '-p', '-t', `=${sessionId}:`, '#{window_width}x#{window_height}')?.trim();
    const shown = () => page.locator('.terminal-head .size').textContent();
    await expect.poll(async () => (await shown()) === paneSize()?.replace('x', '×')).toBe(true);
    const wide = paneSize()!;
    expect(Number(wide.split('x')[0])).toBeGreaterThan(80);
    await page.setViewportSize({ width: 900, height: 700 });
    await expect.poll(() => paneSize(), { timeout: 15_000 }).not.toBe(wide);
    expect(Number(paneSize()!.split('x')[0])).toBeLessThan(Number(wide.split('x')[0]));
    await expect.poll(async () => (await shown()) === paneSize()?.replace('x', '×')).toBe(true);
    await page.setViewportSize(VIEWPORTS.desktop);
    await expect.poll(() => paneSize(), { timeout: 15_000 }).toBe(wide);
    await screenshot(page, 'session');

    // The list: the new session, its state with who caused it, its age, its node.
    await page.getByRole('link', { name: 'Sessions', exact: false }).first().click();
    const row = page.locator(`[data-session="${sessionId}"]`);
    await row.waitFor();
    expect(await row.getByTestId('session-state').textContent()).toMatch(/^running.*by supervisor$/);
    expect(await row.locator('time').textContent()).toBe('just now');
    expect(await row.locator('.chip.node').textContent()).toBe('checkout/payment');
    await screenshot(page, 'sessions');
  });

  it('the list is live: a transition made by the CLI shows without a reload, with its sub-reason, its source and the unread marker', async () => {
    await open('#/sessions');
    const row = page.locator(`[data-session="${sessionId}"]`);
    await row.waitFor();
    await page.evaluate(() => ((window as unknown as { __same: boolean }).__same = true));
    // The signal an agent's hook sends at the end of its turn: awaiting{turn-end}, by hook, unread.
    await cli('session', 'signal', sessionId, 'turn-end');
    await expect.poll(() => row.getByTestId('session-state').textContent(), { timeout: 15_000 }).toBe('awaitingturn-endby hook');
    expect(await row.getAttribute('class')).toContain('unread');
    expect(await page.locator('.top nav a', { hasText: 'Sessions' }).locator('.count').textContent()).toBe('1');
    // Opening the session is viewing it: the marker clears, for the CLI too.
    await row.getByRole('link').first().click();
    await expect.poll(async () => (await shownOver(sessionId)).unread, { timeout: 15_000 }).toBe(false);
    expect(JSON.parse(await cli('session', 'show', sessionId, '--json')).unread).toBe(false);
    await expect.poll(() => page.locator('.top nav a', { hasText: 'Sessions' }).locator('.count').count()).toBe(0);
    await page.goBack();
    await row.waitFor();
    expect((await row.getAttribute('class')) ?? '').not.toContain('unread');
    await cli('session', 'interrupt', sessionId);
    // Said once: "interrupted · by user", not "interrupted · by-user · by user" (issue 34).
    await expect.poll(() => row.getByTestId('session-state').textContent(), { timeout: 15_000 }).toBe('interruptedby user');
    await cli('session', 'resume', sessionId);
    await expect.poll(() => row.getByTestId('session-state').textContent(), { timeout: 15_000 }).toMatch(/^running/);
    expect(await page.evaluate(() => (window as unknown as { __same?: boolean }).__same)).toBe(true);
  });

  it('session page: the prompt box, raw keys, a pasted file typed as its uploaded path, read-only refusing input', async () => {
    await open(`#/sessions/${sessionId}`);
    await expect.poll(() => paneState(), { timeout: 10_000 }).toBe('live');

    await page.getByLabel('Prompt text').fill('echo from-$((40+2))');
    await page.getByRole('button', { name: 'Send prompt' }).click();
    await expect.poll(() => page.getByTestId('prompt-result').textContent()).toBe('Delivered to the pane.');
    await expect.poll(() => showsLine('from-42'), { timeout: 15_000 }).toBe(true);
    expect((await shownOver(sessionId)).timeline.map((t) => t.body)).toContain('echo from-$((40+2))');

    // Issue 34: a paste too long for one prompt (over the API's 1 MiB body) is refused in the page's words,
    // with the offer to attach it as a file; one click uploads it and sends a prompt naming the file.
    const long = Array.from({ length: 40_000 }, (_, i) => `pasted line ${i} of a long log`).join('\n');
    expect(Buffer.byteLength(long)).toBeGreaterThan(1 << 20);
    // Pasted: the whole text lands in the box at once (as a paste does), then Send.
    await page.getByLabel('Prompt text').evaluate((el, text) => {
      (el as HTMLTextAreaElement).value = text;
      el.dispatchEvent(new Event('input', { bubbles: true }));
    }, long);
    await page.getByRole('button', { name: 'Send prompt' }).click();
    const tooLong = page.getByRole('alert').filter({ hasText: 'This text is too long to send as a prompt.' });
    await tooLong.waitFor();
    expect(await tooLong.textContent()).not.toMatch(/1048576|bytes|request bodies/);
    await shots(page, 'prompt-too-long', tooLong);
    await tooLong.getByRole('button', { name: /^Attach it as a file \(1\.\d MB\)$/ }).click();
    await expect.poll(() => page.getByTestId('prompt-result').textContent()).toMatch(/^Attached as .*pasted-text\.txt \(1\.\d MB\)/);
    const attached = /^Attached as (.*pasted-text\.txt) \(/.exec((await page.getByTestId('prompt-result').textContent())!)![1]!;
    expect(attached.startsWith(uploads)).toBe(true);
    expect(readFileSync(attached, 'utf8')).toBe(long);
    expect([await page.getByLabel('Prompt text').inputValue(), await page.getByRole('alert').count()]).toEqual(['', 0]);
    const lastPrompt = (await shownOver(sessionId)).timeline.map((t) => t.body).at(-1);
    expect(lastPrompt).toContain(attached);

    // Raw keys: a typed command without Enter, then the Enter button.
    await typeInTerminal('echo raw-$((1+1))');
    await page.getByRole('button', { name: 'Enter', exact: true }).click();
    await expect.poll(() => showsLine('raw-2'), { timeout: 15_000 }).toBe(true);

    // A file pasted into the terminal goes through /api/uploads and its path is typed at the cursor.
    await typeInTerminal('cat ');
    await page.getByLabel('Paste a file into the terminal (uploads it and types its path)').setInputFiles({ name: "notes v1's.txt", mimeType: 'text/plain', buffer: Buffer.from('pasted-file-body\n') });
    await expect.poll(() => page.getByTestId('typed-path').textContent()).toContain(uploads);
    const path = (await page.getByTestId('typed-path').locator('code').textContent())!;
    expect(path.endsWith("/notes v1's.txt")).toBe(true);
    expect(readFileSync(path, 'utf8')).toBe('pasted-file-body\n');
    await page.keyboard.press('Enter');
    await expect.poll(() => showsLine('pasted-file-body'), { timeout: 15_000 }).toBe(true);

    // A file pasted from the clipboard, or dropped, onto the terminal takes the same way.
    for (const how of ['paste', 'drop'] as const) {
      await typeInTerminal('cat ');
      await page.locator('.terminal-frame .xterm').evaluate((el, [how, body]) => {
        const dt = new DataTransfer();
        dt.items.add(new File([body!], `${how}.txt`, { type: 'text/plain' }));
        const target = el.querySelector('textarea') ?? el;
        target.dispatchEvent(how === 'paste' ? new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }) : new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
      }, [how, `${how}-file-body\n`]);
      await expect.poll(() => page.getByTestId('typed-path').textContent()).toContain(`/${how}.txt`);
      await page.keyboard.press('Enter');
      await expect.poll(() => showsLine(`${how}-file-body`), { timeout: 15_000 }).toBe(true);
    }

    // Read-only: the terminal reconnects in read mode and nothing typed reaches the pane.
    await page.getByLabel('Read-only').check();
    await expect.poll(() => paneState(), { timeout: 15_000 }).toBe('live');
    await typeInTerminal('echo leaked-$((2+3))');
    await page.keyboard.press('Enter');
    // A file pasted into a read-only terminal is uploaded, but its path is not typed, and the page says so in
    // its own words: no "typed" line, no READ_ONLY code or API sentence.
    await page.getByLabel('Paste a file into the terminal (uploads it and types its path)').setInputFiles({ name: 'ro.txt', mimeType: 'text/plain', buffer: Buffer.from('ro\n') });
    const roRefusal = page.getByRole('alert').filter({ hasText: 'The terminal is read-only' });
    await roRefusal.waitFor();
    expect(await roRefusal.textContent()).toMatch(/the file ro\.txt was uploaded, but its path was not typed.*Untick Read-only, then try again\./s);
    expect(await roRefusal.textContent()).not.toMatch(/READ_ONLY|mode=read|\?mode/);
    expect(await page.getByTestId('typed-path').count()).toBe(0);
    expect(await page.getByTestId('pane-notice').count()).toBe(0);
    await page.getByLabel('Read-only').uncheck();
    await expect.poll(() => paneState(), { timeout: 15_000 }).toBe('live');
    expect(await roRefusal.count()).toBe(0);
    // Input is serialized per session: had the read-only keystrokes gone through, they would be before this.
    await typeInTerminal('echo back-$((3+4))');
    await page.keyboard.press('Enter');
    await expect.poll(() => showsLine('back-7'), { timeout: 15_000 }).toBe(true);
    expect(await cli('session', 'capture', sessionId)).not.toContain('leaked');
  });

  it('a refused transition shows the server’s message; review shows the bundle with its pre-flight; close ends the terminal', async () => {
    await open(`#/sessions/${sessionId}`);
    await expect.poll(() => paneState(), { timeout: 10_000 }).toBe('live');
    // Merge is not offered while the session runs: the page says why instead of offering a refusal.
    expect(await page.getByRole('button', { name: 'Merge', exact: true }).count()).toBe(0);
    expect(await page.getByTestId('not-offered').textContent()).toContain('Merge is offered once the session is up for review; it is running now.');
    // A refusal the page cannot foresee (uncommitted work in the worktree) shows the server's message.
    const scratch = join((await shownOver(sessionId)).worktree, 'scratch.txt');
    writeFileSync(scratch, 'x\n');
    await page.getByRole('button', { name: 'Run checks' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    // The code stays out of the text (a person reads the message), kept on the box for bug reports.
    expect(await alert.textContent()).toMatch(/The checks did not run.*uncommitted changes \(scratch\.txt\)/s);
    // In the page's words (issue 34): what to click, not the git command and worktree path the CLI gets.
    expect(await alert.textContent()).toContain('Ask the agent to commit them (Send a prompt), then click Run checks again.');
    expect(await alert.textContent()).not.toMatch(/git -C|commit -am|\/tmp\//);
    await shots(page, 'checks-uncommitted', alert);
    expect([await alert.getAttribute('data-code'), await alert.textContent()]).toEqual(['SESSION_REFUSED', expect.not.stringContaining('SESSION_REFUSED')]);
    rmSync(scratch);
    expect((await shownOver(sessionId)).state).toBe('running');

    // A commit on the session's branch, made in its pane.
    await page.getByLabel('Prompt text').fill("echo dash > dash.txt && git add dash.txt && git commit -qm 'from the dashboard' && echo committed-ok");
    await page.getByRole('button', { name: 'Send prompt' }).click();
    await expect.poll(() => showsLine('committed-ok'), { timeout: 10_000 }).toBe(true);
    await page.getByRole('button', { name: 'Request review' }).click();
    await expect.poll(() => page.getByTestId('session-state').first().textContent(), { timeout: 15_000 }).toMatch(/^review/);
    await expect.poll(() => page.getByTestId('preflight').textContent(), { timeout: 10_000 }).toContain('merges cleanly');
    expect(await page.locator('.review .commits').textContent()).toContain('from the dashboard');
    await expect.poll(() => page.locator('.review .diff').first().textContent()).toContain('+dash');
    await page.locator('.review').scrollIntoViewIfNeeded();
    await screenshot(page, 'session-review');

    await page.getByRole('button', { name: 'Close', exact: true }).click();
    await page.getByRole('button', { name: 'Yes, close' }).click();
    // The terminal ends (close code 1000) and the page shows the session has no pane any more.
    await expect.poll(() => page.getByTestId('no-pane').textContent(), { timeout: 15_000 }).toContain('No live pane: the session is closed');
    await expect.poll(async () => (await shownOver(sessionId)).state).toBe('closed');
    expect(JSON.parse(await cli('session', 'show', sessionId, '--json')).state).toBe('closed');
    expect(tmuxHas(home, sessionId)).toBe(false);
    // No prompt reaches a closed session: the page offers no prompt box, and says so.
    expect(await page.getByTestId('no-prompt').textContent()).toBe('No prompt reaches a closed session.');
    expect(await page.getByRole('button', { name: 'Send prompt' }).count()).toBe(0);
  });

  it('a hot reload of the backend with the board stream and a terminal open: both reconnect by themselves', async () => {
    await open('#/sessions');
    await page.getByLabel('Harness').selectOption('shell');
    await page.getByLabel('Task').fill('Survive a reload');
    await page.getByRole('button', { name: 'Spawn' }).click();
    await expect.poll(() => page.url()).toMatch(/#\/sessions\/[^/]+$/);
    const id = decodeURIComponent(/#\/sessions\/(.+)$/.exec(page.url())![1]!);
    await expect.poll(() => paneState(), { timeout: 10_000 }).toBe('live');
    await page.getByTestId('link-state').filter({ hasText: 'live' }).waitFor();
    // Every state both badges show, recorded from inside the page.
    await page.evaluate(() => {
      const w = window as unknown as { __states: Record<string, string[]> };
      w.__states = { board: [], pane: [], notice: [] };
      for (const [name, sel] of [['board', '[data-testid="link-state"]'], ['pane', '[data-testid="pane-state"]']] as const) {
        const el = document.querySelector(sel)!;
        new MutationObserver(() => w.__states[name]!.push(el.textContent ?? '')).observe(el, { childList: true, characterData: true, subtree: true });
      }
      // The terminal's notice comes and goes: every text it showed, read on each change of the card.
      const card = document.querySelector('.terminal-card')!;
      new MutationObserver(() => {
        const t = card.querySelector('[data-testid="pane-notice"]')?.textContent;
        if (t && w.__states.notice!.at(-1) !== t) w.__states.notice!.push(t);
      }).observe(card, { childList: true, characterData: true, subtree: true });
    });
    const states = () => page.evaluate(() => (window as unknown as { __states: Record<string, string[]> }).__states);
    const core = join(pkg, 'dist/src/http/routes/core.js');
    writeFileSync(core, `${readFileSync(core, 'utf8')}\n// reload\n`);
    await s.line(/switched to child 2 /);
    await expect.poll(async () => (await states()).pane, { timeout: 15_000, interval: 50 }).toContain('reconnecting…');
    await expect.poll(async () => (await states()).board, { timeout: 15_000, interval: 50 }).toContain('reconnecting…');
    await expect.poll(() => paneState(), { timeout: 15_000, interval: 50 }).toBe('live');
    await expect.poll(() => page.getByTestId('link-state').textContent(), { timeout: 15_000, interval: 50 }).toBe('live');
    // While it reconnected the terminal said why, in the page's words (the close code 1012 and the
    // socket's reason stay out), and the notice went once it was live again.
    const notices = (await states()).notice ?? [];
    expect(notices[0]).toBe('The project’s server is restarting. The terminal reconnects by itself in a moment.');
    for (const n of notices) expect(n).not.toMatch(/\b1\d{3}\b|\b4\d{3}\b|closed the terminal|server restarting|socket/);
    expect(await page.getByTestId('pane-notice').count()).toBe(0);
    // Live against the new child: typing still reaches the pane, and the pane's output the page.
    await typeInTerminal('echo after-$((5+5))');
    await page.keyboard.press('Enter');
    await expect.poll(() => showsLine('after-10'), { timeout: 15_000 }).toBe(true);
    expect(seen.errors).toEqual([]);
    // Quarantine from the page, with a reason asked inside its question (no loose field in the action bar):
    // the state shows it and the terminal ends.
    expect(await page.getByLabel(/reason/i).count()).toBe(0);
    await page.getByRole('button', { name: 'Quarantine', exact: true }).click();
    const question = page.getByRole('group', { name: 'Confirm: Quarantine' });
    await question.getByLabel('Reason (optional)').fill('looping on tests');
    await question.getByRole('button', { name: 'Yes, quarantine' }).click();
    await expect.poll(() => page.getByTestId('session-state').first().textContent(), { timeout: 15_000 }).toBe('quarantinedlooping on testsby user');
    expect(JSON.parse(await cli('session', 'show', id, '--json'))).toMatchObject({ state: 'quarantined', reason: 'looping on tests' });
    await page.getByTestId('no-pane').waitFor();
    expect(tmuxHas(home, id)).toBe(false);
  });
});

describe('eval scoreboard in the dashboard', () => {
  it('shows a reading recorded from the CLI, and the next one live', async () => {
    const first = JSON.parse(await cli('eval', 'record', SCENARIO, '--outcome', 'pass', '--score', '0.93', '--by', 'ci-bot', '--json'));
    await open('#/eval');
    const cell = page.locator(`[data-scenario="${SCENARIO}"] td[data-scope="trunk"]`);
    await cell.waitFor();
    expect(await cell.getByTestId('outcome').textContent()).toBe('pass · 0.93');
    expect(await cell.textContent()).toContain('by ci-bot');
    expect(first.outcome ?? first.reading?.outcome ?? 'pass').toBe('pass');
    await screenshot(page, 'eval');
    await cli('eval', 'record', SCENARIO, '--outcome', 'fail', '--by', 'ci-bot');
    await expect.poll(() => cell.getByTestId('outcome').textContent(), { timeout: 15_000 }).toBe('fail');
    expect(await cell.locator('.tick').evaluateAll((ts) => ts.map((t) => t.getAttribute('title')))).toEqual(['fail', 'pass']);
  });
});

describe('the new views at 390×844', () => {
  it('sessions, a session and the scoreboard fit the width', async () => {
    const id = JSON.parse(await cli('session', 'spawn', 'Phone check', '--harness', 'shell', '--json')).id as string;
    await page.setViewportSize(VIEWPORTS.phone);
    try {
      for (const [name, hash] of [
        ['sessions', '#/sessions'],
        ['session', `#/sessions/${id}`],
        ['eval', '#/eval'],
      ] as const) {
        await open(hash);
        await page.locator('main h1').first().waitFor();
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
        expect(statSync(await screenshot(page, name)).size).toBeGreaterThan(5_000);
      }
      // A closed session: one "Prompts" card, its timeline, saying no prompt reaches it (the prompt box's
      // own card used to repeat the heading, one above the other on a phone).
      await cli('session', 'close', id);
      await open(`#/sessions/${id}`);
      await page.getByTestId('no-pane').waitFor();
      await page.getByTestId('no-prompt').waitFor();
      for (const vp of [VIEWPORTS.phone, VIEWPORTS.desktop]) {
        await page.setViewportSize(vp);
        expect(await page.getByRole('heading', { name: 'Prompts', exact: true }).evaluateAll((hs) => hs.filter((h) => (h as HTMLElement).offsetParent !== null).length)).toBe(1);
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(vp.width);
        await screenshot(page, 'session-closed');
      }
    } finally {
      await page.setViewportSize(VIEWPORTS.desktop);
      await cli('session', 'close', id).catch(() => {});
    }
  });
});
