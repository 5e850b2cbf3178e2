import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LiveProject, type BoardChange } from '../src/store/board/live.js';
import { openProject } from '../src/store/compose/open-project.js';
import { cleanupRepos, git, ok, tempDir } from './helpers/repo.js';
import { demoRepo } from './helpers/server.js';

/** Resolves with the next change the live view announces whose cause is `cause`. */
function nextChange(live: LiveProject, cause: BoardChange['cause']): Promise<BoardChange> {
  return new Promise((resolve) => {
    const on = (c: BoardChange) => {
      if (c.cause !== cause) return;
      live.bus.off('change', on);
      resolve(c);
    };
    live.bus.on('change', on);
  });
}

describe('the live board with linked worktrees', () => {
  let dir: string;
  let live: LiveProject;
  const wts: string[] = [];

  beforeAll(async () => {
    dir = await demoRepo();
    const base = tempDir();
    for (const name of ['one', 'two', 'three']) {
      const wt = join(base, name);
      git(dir, 'worktree', 'add', '-q', '-b', `work-${name}`, wt);
      wts.push(wt);
    }
    live = new LiveProject(openProject(dir)).start();
  });
  afterAll(async () => {
    await live.stop();
    cleanupRepos();
  });

  const overlayOf = async () => (await live.snapshot()).board.overlay.map((o) => ({ branch: o.branch, head: o.head, nodes: o.nodes }));

  it('serves an unchanged board from its memo, without re-deriving any worktree', async () => {
    const first = await live.snapshot();
    expect(first.board.overlay.map((o) => o.branch).sort()).toEqual(['work-one', 'work-three', 'work-two']);
    const { rebuilds } = live.stats;
    const { entries, lists } = live.overlay.stats;
    for (let i = 0; i < 5; i++) expect((await live.snapshot()).etag).toBe(first.etag);
    expect(live.stats.rebuilds).toBe(rebuilds);
    expect(live.overlay.stats).toEqual({ entries, lists });
  });

  it('an edit to a spec file in one worktree moves the board and re-derives only that worktree', async () => {
    await live.snapshot();
    const { entries } = live.overlay.stats;
    const changed = nextChange(live, 'worktrees');
    appendFileSync(join(wts[0]!, 'specs/catalog/search.md'), '\nA new rule.\n');
    await changed;
    const overlay = await overlayOf();
    expect(overlay.find((o) => o.branch === 'work-one')!.nodes).toEqual(['catalog/search']);
    expect(overlay.filter((o) => o.branch !== 'work-one').every((o) => o.nodes.length === 0)).toBe(true);
    expect(live.overlay.stats.entries).toBe(entries + 1);
  });

  it('a new spec file and a commit in another worktree show, with its new head', async () => {
    const changed = nextChange(live, 'worktrees');
    writeFileSync(join(wts[1]!, 'specs/catalog/gifts.md'), '# Gifts\n');
    await changed;
    expect((await overlayOf()).find((o) => o.branch === 'work-two')!.nodes).toEqual(['catalog/gifts']);
    const committed = nextChange(live, 'worktrees');
    git(wts[1]!, 'add', '-A');
    git(wts[1]!, 'commit', '-qm', 'gifts');
    await committed;
    const head = git(wts[1]!, 'rev-parse', 'HEAD').trim();
    const two = (await overlayOf()).find((o) => o.branch === 'work-two')!;
    expect(two).toEqual({ branch: 'work-two', head, nodes: ['catalog/gifts'] });
  });

  it('a worktree removed or added changes the overlay', async () => {
    const removed = nextChange(live, 'worktrees');
    git(dir, 'worktree', 'remove', '--force', wts[2]!);
    await removed;
    expect((await overlayOf()).map((o) => o.branch).sort()).toEqual(['work-one', 'work-two']);
    const added = nextChange(live, 'worktrees');
    const wt = join(tempDir(), 'four');
    git(dir, 'worktree', 'add', '-q', '-b', 'work-four', wt);
    await added;
    expect((await overlayOf()).map((o) => o.branch).sort()).toEqual(['work-four', 'work-one', 'work-two']);
    const edited = nextChange(live, 'worktrees');
    writeFileSync(join(wt, 'specs/catalog/search.md'), '# Replaced\n');
    await edited;
    expect((await overlayOf()).find((o) => o.branch === 'work-four')!.nodes).toEqual(['catalog/search']);
  });

  it('trunk taking in a worktree’s commits re-derives its fork point: the merged nodes leave the overlay', async () => {
    const before = await live.snapshot();
    git(dir, 'merge', '-q', '--ff-only', 'work-two');
    const head = git(dir, 'rev-parse', 'HEAD').trim();
    // The merge moves trunk's ref and adds a spec file on trunk: wait until the board has taken both in.
    for (let i = 0; ; i++) {
      // Listening before the snapshot, to any cause: the merge's change may be announced while the snapshot
      // is taken, and as 'specs' (its spec file is written before trunk's ref moves), not 'worktrees'.
      let on = () => {};
      const moved = new Promise<void>((resolve) => live.bus.on('change', (on = () => resolve())));
      const snap = await live.snapshot();
      const two = snap.board.overlay.find((o) => o.branch === 'work-two')!;
      if (snap.etag !== before.etag && two.forkPoint === head) {
        live.bus.off('change', on);
        expect(two.nodes).toEqual([]);
        expect(snap.board.nodes.some((n) => n.id === 'catalog/gifts')).toBe(true);
        break;
      }
      if (i > 500) throw new Error('the board never took in the merge');
      await moved;
      live.bus.off('change', on);
    }
    expect((await overlayOf()).find((o) => o.branch === 'work-one')!.nodes).toEqual(['catalog/search']);
  });
});

describe('a worktree that cannot be diffed yet', () => {
  it('shows with no changes instead of failing the board (CLI and live view alike)', async () => {
    const dir = await demoRepo();
    const wt = join(tempDir(), 'half-made');
    git(dir, 'worktree', 'add', '-q', '-b', 'half', wt);
    // What `git worktree add` leaves while it is still checking out: a HEAD naming no commit yet.
    writeFileSync(join(dir, '.git/worktrees/half-made/HEAD'), `${'0'.repeat(40)}\n`);
    const board = JSON.parse(await ok(dir, ['graph', '--json'])) as { overlay: { worktree: string; nodes: string[]; forkPoint: string | null }[] };
    expect(board.overlay).toEqual([expect.objectContaining({ worktree: wt, nodes: [], forkPoint: null })]);
    const live = new LiveProject(openProject(dir)).start();
    try {
      expect((await live.snapshot()).board.overlay).toEqual([expect.objectContaining({ worktree: wt, nodes: [] })]);
    } finally {
      await live.stop();
    }
  });
});
