import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { editDelta } from '../src/store/spec/worktrees.js';
import { cleanupRepos, git, ok, tempRepo, testEnv } from './helpers/repo.js';
import { killTmux, tmux, waitFor } from './helpers/sessions.js';
import { launchChromium, screenshot, scrollTo, VIEWPORTS } from './helpers/browser.js';
import { packageCopy, startServe } from './helpers/serve.js';
import { bringTrunkIn } from '../src/store/sessions/checks/review.js';
import type { Locator, Page } from 'playwright-core';

// The newcomer's sequence (issue 39): two real shell sessions edit one file, the first is merged, trunk is
// merged into the second in its own terminal with the conflict resolved. Its review is then `main...head`:
// its own commits only, and the files and counts of `git diff main...trellis/<id>`; the node page's
// in-flight diff and the board's fork point say the same.

let home = '';
afterAll(() => {
  if (home) killTmux(home);
  cleanupRepos();
});

interface Bundle {
  base: string;
  head: string;
  commits: { hash: string; subject: string }[];
  files: { path: string; status: string; diff: string }[];
  checks: { checks: { scenario: string }[] };
  preflight: { result: string; conflicts: string[]; trunkMovedAhead: boolean; bringTrunkIn: { prompt: string } | { command: string } | null };
}

/** `git diff --numstat`'s rows as {path: [added, removed]}. */
function numstat(text: string): Record<string, [number, number]> {
  const out: Record<string, [number, number]> = {};
  for (const row of text.split('\n').filter(Boolean)) {
    const [a, d, path] = row.split('\t');
    out[path!] = [Number(a), Number(d)];
  }
  return out;
}

/** A file's diff counted as the page counts it. */
function counted(diff: string): [number, number] {
  const rows = diff.split('\n');
  return [rows.filter((l) => l.startsWith('+') && !l.startsWith('+++')).length, rows.filter((l) => l.startsWith('-') && !l.startsWith('---')).length];
}

/** A claude session's record on a plain pane at `worktree`: what the page offers an agent, without the agent. */
async function registerAgent(dir: string, home: string, id: string, worktree: string, base: string): Promise<void> {
  writeFileSync(join(dir, 'trellis.local.json'), JSON.stringify({ sessions: { minFreeMb: 1e12 } }));
  const pane = tmux(home, 'display-message', '-p', '-t', `=${id}:`, '#{pane_id}')!.trim();
  const { openProject } = await import('../src/store/compose/open-project.js');
  const p = openProject(dir);
  const meta = () => ({ by: 'test', at: new Date().toISOString() });
  await p.sessionLog.write(id, { type: 'spawn', harness: 'claude', task: 'import and search', nodes: [], issue: null, base, branch: `trellis/${id}`, worktree, ...meta(), source: 'user' });
  await p.sessionLog.write(id, { type: 'start', ...meta(), source: 'supervisor' });
  await p.sessionLog.write(id, { type: 'launch', tmuxSession: id, pane, awaitsSignal: true, ...meta(), source: 'supervisor' });
}

/** A serve of the project and a Chromium page on it, both stopped after `fn`. */
async function onThePage(dir: string, home: string, fn: (page: Page, url: string) => Promise<void>): Promise<void> {
  const serve = await startServe(packageCopy(), dir, { ...testEnv(dir), TRELLIS_HOME: home });
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: VIEWPORTS.desktop });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await fn(page, serve.url);
    expect(errors).toEqual([]);
  } finally {
    await browser.close();
    await serve.stop('SIGKILL');
  }
}

/** The element lies within the viewport's width (nothing cut off at the right on a phone). */
async function fits(target: Locator): Promise<boolean> {
  const box = await target.boundingBox();
  const width = target.page().viewportSize()!.width;
  return !!box && box.x >= 0 && box.x + box.width <= width;
}

describe('the review after trunk is merged into the session', () => {
  it('lists only the session’s own commits and the files and counts of git diff trunk...head; trunk moved ahead means trunk has commits the branch lacks', async () => {
    const dir = tempRepo();
    home = testEnv(dir).TRELLIS_HOME!;
    mkdirSync(join(dir, 'specs'), { recursive: true });
    writeFileSync(join(dir, 'specs/import.md'), '# Import\n\nIt imports.\n');
    writeFileSync(join(dir, 'specs/export.md'), '---\nscenarios:\n  - { id: export/csv, run: "grep -q CSV specs/export.md" }\n---\n# Export\n\nIt exports.\n');
    writeFileSync(join(dir, 'trellis.json'), '{}\n');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-qm', 'spec');
    const cli = (...args: string[]) => ok(dir, args);
    const commitIn = async (id: string, command: string, subject: string) => {
      await cli('session', 'prompt', id, '--body', command);
      await waitFor(`session ${id} to commit '${subject}'`, () => git(dir, 'log', '-1', '--format=%s', `trellis/${id}`).trim() === subject);
    };

    const one = (await cli('session', 'spawn', 'import from csv', '--harness', 'shell')).trim();
    const two = (await cli('session', 'spawn', 'import and search', '--harness', 'shell')).trim();
    const branch = `trellis/${two}`;
    await commitIn(one, 'echo "It reads CSV." >> specs/import.md && echo "It writes CSV." >> specs/export.md && git commit -qam one-import', 'one-import');
    await commitIn(two, 'printf "It reads JSON.\\nIt dedupes.\\n" >> specs/import.md && git commit -qam two-import', 'two-import');
    await commitIn(two, 'printf "# Search\\n\\nIt finds.\\nBy title.\\n" > specs/search.md && git add -A && git commit -qm two-search', 'two-search');

    // Both change import.md: each is flagged as overlapping the other.
    const overlaps = async (id: string) => JSON.parse(await cli('session', 'ls', '--json')).find((x: { id: string }) => x.id === id).overlaps;
    expect(await overlaps(two)).toEqual([{ session: one, nodes: ['import'], paths: ['specs/import.md'] }]);

    // Session one is merged into trunk (as its merge prompt would: in the main checkout here).
    git(dir, 'merge', '--no-ff', '-q', '-m', 'merge one', `trellis/${one}`);

    const before: Bundle = JSON.parse(await cli('review', two, '--json'));
    expect(before.preflight).toMatchObject({ result: 'conflicts', conflicts: ['specs/import.md'], trunkMovedAhead: true });
    // One next action that can succeed: a shell session is given the exact command for its terminal.
    expect(before.preflight.bringTrunkIn).toEqual({ command: 'git merge --no-edit main' });

    // The page offers the same next action, at both sizes; an agent session is offered a prompt instead,
    // which is sent from the page. (An agent stands in as a session record on a plain pane: the prompt is
    // held on its timeline until the agent waits, which is the action succeeding.)
    git(dir, 'branch', 'trellis/agent1', branch);
    const agentTree = join(home, 'agent1');
    git(dir, 'worktree', 'add', '-q', agentTree, 'trellis/agent1');
    tmux(home, 'new-session', '-d', '-s', 'agent1', '-c', agentTree);
    await registerAgent(dir, home, 'agent1', agentTree, git(dir, 'rev-parse', `${branch}~2`).trim());
    expect(bringTrunkIn('claude', 'main', ['specs/import.md'])).toEqual({ prompt: expect.stringContaining('git merge main in your worktree, resolve the conflicts in specs/import.md') });
    await onThePage(dir, home, async (page, url) => {
      for (const viewport of [VIEWPORTS.desktop, VIEWPORTS.phone]) {
        await page.setViewportSize(viewport);
        await page.goto('about:blank');
        await page.goto(`${url}#/sessions/${two}`);
        await page.getByRole('button', { name: 'Load the review bundle' }).click();
        const next = page.getByTestId('bring-trunk-in');
        await expect.poll(() => next.textContent({ timeout: 1_000 }).catch(() => ''), { timeout: 20_000 }).toContain('run git merge --no-edit main');
        expect(await next.textContent()).toContain("in the session's terminal");
        expect(await page.locator('.review').textContent()).toContain('trunk moved ahead of the branch');
        await scrollTo(next);
        expect(await fits(next)).toBe(true);
        await screenshot(page, 'bring-trunk-in-shell');

        await page.goto('about:blank');
        await page.goto(`${url}#/sessions/agent1`);
        await page.getByRole('button', { name: 'Load the review bundle' }).click();
        const ask = page.getByRole('button', { name: 'Ask the agent to bring trunk in' });
        await scrollTo(ask, 20_000);
        expect(await fits(page.getByTestId('bring-trunk-in'))).toBe(true);
        await screenshot(page, 'bring-trunk-in-agent');
      }
      await page.getByRole('button', { name: 'Ask the agent to bring trunk in' }).click();
      await expect.poll(() => page.getByTestId('bring-trunk-in-result').textContent({ timeout: 1_000 }).catch(() => ''), { timeout: 15_000 }).toMatch(/^Asked: /);
      const agent = JSON.parse(await cli('session', 'show', 'agent1', '--json'));
      expect(agent.timeline.map((t: { body: string }) => t.body)).toEqual([expect.stringContaining('Bring the latest main into your branch: run git merge main')]);
    });

    // In its terminal: bring trunk in, resolve the conflict (keep both), commit.
    await commitIn(
      two,
      'git merge main; printf "# Import\\n\\nIt imports.\\nIt reads CSV.\\nIt reads JSON.\\nIt dedupes.\\n" > specs/import.md && git add specs/import.md && git commit -qm bring-trunk-in',
      'bring-trunk-in',
    );

    const after: Bundle = JSON.parse(await cli('review', two, '--json'));
    // Its own commits: on the branch and not on trunk (the merge that brought trunk in is one of them).
    expect(after.commits.map((c) => c.subject)).toEqual(['two-import', 'two-search', 'bring-trunk-in']);
    expect(after.commits.map((c) => c.hash).sort()).toEqual(git(dir, 'rev-list', `main..${branch}`).trim().split('\n').sort());
    // The diff from the merge base with trunk as it is now.
    expect(after.base).toBe(git(dir, 'merge-base', 'main', branch).trim());
    const truth = numstat(git(dir, 'diff', '--numstat', `main...${branch}`));
    expect(truth).toEqual({ 'specs/import.md': [2, 0], 'specs/search.md': [4, 0] });
    expect(Object.fromEntries(after.files.map((f) => [f.path, counted(f.diff)]))).toEqual(truth);
    expect(after.files.find((f) => f.path === 'specs/import.md')!.diff).not.toContain('+It reads CSV.');
    expect(after.preflight).toMatchObject({ result: 'clean', conflicts: [], trunkMovedAhead: false, bringTrunkIn: null });
    // Overlaps use the same definition: session one's work is in trunk, so nothing of it overlaps two's own
    // (the stand-in agent session, on a copy of two's branch, still does: its own work is two's).
    expect((await overlaps(two)).filter((o: { session: string }) => o.session === one)).toEqual([]);
    expect((await overlaps(two)).map((o: { session: string; paths: string[] }) => [o.session, o.paths])).toEqual([['agent1', ['specs/import.md', 'specs/search.md']]]);

    // The checks judge the same change: session one's export node, brought in from trunk, is not this branch's.
    expect(before.checks.checks.map((c) => c.scenario)).toEqual([]);
    expect(after.checks.checks.map((c) => c.scenario)).toEqual([]);

    // The board's fork point and the node page's in-flight diff say the same.
    const board = await cli('board');
    const worktree = JSON.parse(await cli('session', 'show', two, '--json')).worktree as string;
    expect(board).toContain(`worktree ${worktree} (${branch}, forked at ${after.base.slice(0, 10)})`);
    const delta = await editDelta(dir, { node: 'import', path: 'specs/import.md', specRoot: 'specs', worktree, trunk: 'main' });
    expect(delta).toMatchObject({ forkPoint: after.base, additions: 2, deletions: 0 });

    // Once the branch is in trunk (fast-forwarded, as an agent's `git push . HEAD:main` does), the bundle
    // still shows the session's own work, read against trunk just before.
    git(dir, 'merge', '--ff-only', '-q', branch);
    const merged: Bundle & { preflight: { merged: { commit: string } | null } } = JSON.parse(await cli('review', two, '--json'));
    expect(merged.preflight.merged).toEqual({ commit: after.head });
    expect(merged.commits.map((c) => c.subject)).toEqual(['two-import', 'two-search', 'bring-trunk-in']);
    expect(Object.fromEntries(merged.files.map((f) => [f.path, counted(f.diff)]))).toEqual(truth);

  });
});
