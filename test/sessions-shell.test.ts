import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { encodeProject } from '../src/store/trellis-home.js';
import { cleanupRepos, git, ok, tempRepo, testEnv, trellis } from './helpers/repo.js';
import { killTmux, tmuxHas, waitFor } from './helpers/sessions.js';

const homes: string[] = [];
/** A project with its own TRELLIS_HOME (so its own tmux socket). */
function project(opts: { commit?: boolean } = {}): { dir: string; home: string } {
  const dir = tempRepo(opts);
  const home = testEnv(dir).TRELLIS_HOME!;
  homes.push(home);
  return { dir, home };
}
afterEach(() => {
  for (const h of homes.splice(0)) killTmux(h);
});
afterAll(() => cleanupRepos());

const showJson = async (dir: string, id: string) => JSON.parse(await ok(dir, ['session', 'show', id, '--json']));
const refExists = (dir: string, ref: string) => {
  try {
    git(dir, 'rev-parse', '--verify', '--quiet', ref);
    return true;
  } catch {
    return false;
  }
};

describe('a shell session, end to end', () => {
  it('spawns into its own worktree and tmux session, runs a prompt there, reviews it, and closes without a trace', async () => {
    const { dir, home } = project();
    const spawned = JSON.parse(await ok(dir, ['session', 'spawn', 'Add f', '--harness', 'shell', '--json']));
    const id: string = spawned.id;
    expect(spawned).toMatchObject({ state: 'running', harness: 'shell', title: 'Add f', branch: `trellis/${id}`, tmux: { session: id } });
    const worktree = join(home, 'worktrees', encodeProject(dir), id);
    expect(spawned.worktree).toBe(worktree);
    expect(git(worktree, 'rev-parse', '--abbrev-ref', 'HEAD').trim()).toBe(`trellis/${id}`);
    expect(tmuxHas(home, id)).toBe(true);
    // The pane runs in the worktree with the session's environment.
    // tmux reads the path from the pane's foreground process, which it may not know in the first instant.
    const panePath = () => execFileSync('tmux', ['-S', join(home, 'tmux.sock'), 'display', '-p', '-t', spawned.tmux.pane, '#{pane_current_path}'], { encoding: 'utf8' }).trim();
    expect(await waitFor('tmux to know the pane’s working directory', panePath)).toBe(worktree);

    const prompted = JSON.parse(await ok(dir, ['session', 'prompt', id, '--body', 'echo hi > f && git add f && git commit -q -m f', '--json']));
    expect(prompted.delivered).toBe(true);
    expect(prompted.session.timeline).toEqual([expect.objectContaining({ body: 'echo hi > f && git add f && git commit -q -m f', by: 'Test Author' })]);
    await waitFor('the prompt to commit f on the session branch', () => git(dir, 'log', '--format=%s', `trellis/${id}`).startsWith('f\n'));
    expect(readFileSync(join(worktree, 'f'), 'utf8')).toBe('hi\n');
    // The main checkout is untouched.
    expect(existsSync(join(dir, 'f'))).toBe(false);

    const review = JSON.parse(await ok(dir, ['review', id, '--json']));
    const head = git(dir, 'rev-parse', `trellis/${id}`).trim();
    expect(review).toMatchObject({
      session: id,
      base: git(dir, 'rev-parse', 'main').trim(),
      head,
      commits: [{ hash: head, subject: 'f', author: 'Test Author' }],
      files: [{ path: 'f', status: 'A', diff: expect.stringContaining('+hi') }],
      preflight: { trunk: 'main', result: 'clean', conflicts: [], trunkMovedAhead: false, merged: null },
    });

    const closed = JSON.parse(await ok(dir, ['session', 'close', id, '--json']));
    expect(closed).toMatchObject({ state: 'closed', wip: null, tmux: null });
    expect(refExists(dir, `refs/trellis/wip/${id}`)).toBe(false);
    expect(existsSync(worktree)).toBe(false);
    expect(git(dir, 'worktree', 'list', '--porcelain')).not.toContain(id);
    expect(tmuxHas(home, id)).toBe(false);
    // The branch holds the session's commit, so it stays.
    expect(git(dir, 'rev-parse', `trellis/${id}`).trim()).toBe(head);
    expect(git(dir, 'log', '--format=%s (%an)', `refs/trellis/sessions/${id}`).trim().split('\n')).toEqual([
      'close (Test Author)',
      'prompt: echo hi > f && git add f && git commit -q -m f (Test Author)',
      `launch: tmux ${id} pane ${spawned.tmux.pane} (trellis)`,
      'start (supervisor) (trellis)',
      // Its checks, fixed at dispatch (DESIGN.md §14): none are declared here.
      expect.stringMatching(/^checks fixed at [0-9a-f]{12}: 0 declared scenario\(s\) \(Test Author\)$/),
      'spawn shell: Add f (Test Author)',
    ]);
    expect((await ok(dir, ['session', 'ls'])).trim()).toBe('');
    expect(await ok(dir, ['session', 'ls', '--all'])).toContain(id);

    // Merged by a fast-forward: the bundle says the branch is in trunk at its own tip, in JSON and in words.
    git(dir, 'merge', '-q', '--ff-only', `trellis/${id}`);
    expect(JSON.parse(await ok(dir, ['review', id, '--json'])).preflight.merged).toEqual({ commit: head });
    expect((await ok(dir, ['review', id])).split('\n')[1]).toBe(`merged into main at ${head.slice(0, 12)}`);
    // Naming it as what closes an issue is refused: it was spawned for none.
    const issue = (await ok(dir, ['issue', 'open', 'f is missing'])).trim().split(/\s/)[0]!;
    const refused = await trellis(dir, ['issue', 'close', issue, '--session', id]);
    expect([refused.code, refused.stderr]).toEqual([1, expect.stringContaining(`session ${id} was spawned for no issue; close ${issue} without naming a session`)]);
    // An issue id that is none is named as such first (one character off: the nearest id), not as a mismatch.
    const typo = `${issue.slice(0, -1)}${issue.endsWith('a') ? 'b' : 'a'}`;
    const unknown = await trellis(dir, ['issue', 'close', typo, '--session', id]);
    expect([unknown.code, unknown.stderr]).toEqual([1, expect.stringContaining(`no issue ${typo}; did you mean '${issue}'?`)]);
  });

  it('a session closed with nothing committed leaves no branch; its pre-flight sees trunk move ahead and conflicts', async () => {
    const { dir } = project();
    writeFileSync(join(dir, 'a.txt'), 'one\n');
    git(dir, 'add', 'a.txt');
    git(dir, 'commit', '-qm', 'a');
    const id = (await ok(dir, ['session', 'spawn', 'edit a'])).trim();
    const { worktree } = await showJson(dir, id);
    writeFileSync(join(worktree, 'a.txt'), 'session\n');
    git(worktree, 'commit', '-qam', 'session edit');
    writeFileSync(join(dir, 'a.txt'), 'trunk\n');
    git(dir, 'commit', '-qam', 'trunk edit');
    const review = JSON.parse(await ok(dir, ['review', id, '--json']));
    expect(review.preflight).toMatchObject({ result: 'conflicts', conflicts: ['a.txt'], trunkMovedAhead: true });

    const other = (await ok(dir, ['session', 'spawn', 'nothing'])).trim();
    await ok(dir, ['session', 'close', other]);
    expect(refExists(dir, `refs/heads/trellis/${other}`)).toBe(false);
    await ok(dir, ['session', 'close', id]);
  });
});

describe('lossless cleanup', () => {
  for (const action of ['close', 'quarantine'] as const) {
    it(`${action} saves uncommitted edits and new untracked files to refs/trellis/wip/<id>, byte for byte`, async () => {
      const { dir, home } = project();
      writeFileSync(join(dir, 'tracked.txt'), 'before\n');
      git(dir, 'add', 'tracked.txt');
      git(dir, 'commit', '-qm', 'tracked');
      const id = (await ok(dir, ['session', 'spawn', 'work'])).trim();
      const { worktree } = await showJson(dir, id);
      const binary = Buffer.from([0, 1, 2, 255, 254, 10, 13, 0, 42]);
      writeFileSync(join(worktree, 'tracked.txt'), 'after\r\nno newline');
      mkdirSync(join(worktree, 'new', 'deep'), { recursive: true });
      writeFileSync(join(worktree, 'new', 'deep', 'blob.bin'), binary);
      writeFileSync(join(worktree, 'staged.txt'), 'staged\n');
      git(worktree, 'add', 'staged.txt');
      const statusBefore = git(worktree, 'status', '--porcelain');

      if (action === 'quarantine') {
        const q = JSON.parse(await ok(dir, ['session', 'quarantine', id, '--json']));
        expect(q).toMatchObject({ state: 'quarantined', reason: 'manual', source: 'user' });
        // The worktree is kept, its own index untouched by the save.
        expect(git(worktree, 'status', '--porcelain')).toBe(statusBefore);
        expect(tmuxHas(home, id)).toBe(false);
      } else {
        await ok(dir, ['session', 'close', id]);
        expect(existsSync(worktree)).toBe(false);
      }
      const wip = `refs/trellis/wip/${id}`;
      expect((await showJson(dir, id)).wip).toBe(git(dir, 'rev-parse', wip).trim());
      const show = (path: string) => execFileSync('git', ['show', `${wip}:${path}`], { cwd: dir });
      expect(show('tracked.txt').equals(Buffer.from('after\r\nno newline'))).toBe(true);
      expect(show('new/deep/blob.bin').equals(binary)).toBe(true);
      expect(show('staged.txt').toString()).toBe('staged\n');
      // Parented on the session's head (here its base: nothing was committed), so the wip is a diff against the work it continues.
      expect(git(dir, 'rev-parse', `${wip}^`).trim()).toBe((await showJson(dir, id)).base);
      if (action === 'quarantine') {
        expect(await trellis(dir, ['session', 'prompt', id, '--body', 'hello'])).toMatchObject({ code: 1, stderr: expect.stringContaining('quarantined') });
        await ok(dir, ['session', 'close', id]);
      }
    });
  }
});

describe('lossless cleanup of commits on no branch', () => {
  it('close keeps commits made on a detached HEAD on refs/trellis/wip/<id>', async () => {
    const { dir } = project();
    const id = (await ok(dir, ['session', 'spawn', 'detached'])).trim();
    const { worktree } = await showJson(dir, id);
    git(worktree, 'checkout', '-q', '--detach');
    writeFileSync(join(worktree, 'loose.txt'), 'on no branch\n');
    git(worktree, 'add', 'loose.txt');
    git(worktree, 'commit', '-qm', 'loose');
    const head = git(worktree, 'rev-parse', 'HEAD').trim();
    expect(JSON.parse(await ok(dir, ['session', 'close', id, '--json'])).wip).toBe(head);
    expect(git(dir, 'show', `refs/trellis/wip/${id}:loose.txt`)).toBe('on no branch\n');
  });
});

describe('bad input', () => {
  it('unknown ids, refused transitions, unknown harnesses and an empty trunk each get a clear error', async () => {
    const { dir } = project();
    expect(await trellis(dir, ['session', 'show', 'nosuchsession'])).toMatchObject({ code: 1, stderr: expect.stringContaining('no session nosuchsession') });
    expect(await trellis(dir, ['session', 'close', '../../etc'])).toMatchObject({ code: 1, stderr: expect.stringContaining('no session') });
    const bad = await trellis(dir, ['session', 'spawn', 'x', '--harness', 'emacs']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("unknown harness 'emacs': use one of shell");
    const id = (await ok(dir, ['session', 'spawn', 'x'])).trim();
    expect(await trellis(dir, ['session', 'merge', id])).toMatchObject({ code: 1, stderr: expect.stringContaining('the session is running: only a session in review merges') });
    expect(await trellis(dir, ['session', 'resume', id])).toMatchObject({ code: 1, stderr: expect.stringContaining('the session is running') });
    await ok(dir, ['session', 'close', id]);
    expect(await trellis(dir, ['session', 'close', id])).toMatchObject({ code: 1, stderr: expect.stringContaining('the session is closed') });
    expect(await trellis(dir, ['session', 'prompt', id, '--body', 'hi'])).toMatchObject({ code: 1, stderr: expect.stringContaining('closed') });

    const empty = project({ commit: false });
    const r = await trellis(empty.dir, ['session', 'spawn', 'x']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("the trunk 'main' has no commit");
    expect(git(empty.dir, 'for-each-ref')).toBe('');
  });

  it('a spawn that fails midway (its setup command fails) leaves no worktree, branch or tmux session; the setup log is evidence', async () => {
    const { dir, home } = project();
    writeFileSync(join(dir, 'trellis.json'), JSON.stringify({ sessions: { setup: 'echo preparing; echo broken >&2; exit 3' } }));
    const r = await trellis(dir, ['session', 'spawn', 'x']);
    expect(r.code).toBe(1);
    const hash = /evidence ([0-9a-f]{64})/.exec(r.stderr)?.[1];
    expect(r.stderr).toContain("the setup command 'echo preparing; echo broken >&2; exit 3' exited 3");
    expect(await ok(dir, ['evidence', 'get', hash!])).toBe('preparing\nbroken\n');
    const [listed] = JSON.parse(await ok(dir, ['session', 'ls', '--all', '--json']));
    expect(listed).toMatchObject({ state: 'failed', reason: expect.stringContaining('exited 3') });
    expect(existsSync(join(home, 'worktrees', encodeProject(dir), listed.id))).toBe(false);
    expect(git(dir, 'worktree', 'list', '--porcelain')).not.toContain(listed.id);
    expect(git(dir, 'branch', '--list', 'trellis/*')).toBe('');
    expect(tmuxHas(home, listed.id)).toBe(false);
  });

  it('copies the files .worktreeinclude names and runs the setup command in the new worktree', async () => {
    const { dir } = project();
    writeFileSync(join(dir, '.gitignore'), '.env\nbig/\n');
    writeFileSync(join(dir, '.worktreeinclude'), '.env\n');
    writeFileSync(join(dir, 'trellis.json'), JSON.stringify({ sessions: { setup: 'cp .env setup-saw-env' } }));
    git(dir, 'add', '.gitignore', '.worktreeinclude', 'trellis.json');
    git(dir, 'commit', '-qm', 'config');
    writeFileSync(join(dir, '.env'), 'SECRET=1\n');
    mkdirSync(join(dir, 'big'));
    writeFileSync(join(dir, 'big', 'x'), 'not included');
    const id = (await ok(dir, ['session', 'spawn', 'x'])).trim();
    const { worktree } = await showJson(dir, id);
    expect(readFileSync(join(worktree, '.env'), 'utf8')).toBe('SECRET=1\n');
    expect(readFileSync(join(worktree, 'setup-saw-env'), 'utf8')).toBe('SECRET=1\n');
    expect(existsSync(join(worktree, 'big'))).toBe(false);
    await ok(dir, ['session', 'close', id]);
  });
});

describe('loop-in', () => {
  it('a shell session reads no prose: a reply to a thread it opened is never typed into it', async () => {
    const { dir } = project();
    const id = (await ok(dir, ['session', 'spawn', 'reviewer'])).trim();
    const thread = (await ok(dir, ['issue', 'open', 'Is the cache right?', '--by', id])).trim();
    await ok(dir, ['issue', 'reply', thread, '--body', 'yes (really)', '--by', 'ann']);
    expect((await showJson(dir, id)).timeline).toEqual([]);
    await ok(dir, ['session', 'close', id]);
  });
});
