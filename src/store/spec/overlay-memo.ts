import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readTip } from '../git/refs.js';
import { TreeWatcher } from './watch-tree.js';
import { hasLinkedWorktrees, listWorktrees, overlayEntry, trunkOf, undiffedEntry, type OverlayEntry, type Worktree } from './worktrees.js';

/**
 * The worktree overlay of a long-running reader, memoized on what it summarizes. Each entry costs three
 * git runs; with twenty session worktrees that is sixty processes, far too many for every request. So:
 *
 * - the list of worktrees is re-read (one `git worktree list`) only when a cheap stamp of it moves: the
 *   names under `<gitdir>/worktrees/`, each one's `HEAD` and the commit it resolves to, and the main
 *   checkout's `HEAD` — all plain file reads;
 * - an entry is recomputed only when its worktree's HEAD commit, trunk's tip, or its spec files moved.
 *   Spec file edits are seen by a watcher per worktree (`onEdit` tells the owner, which bumps its board
 *   generation, with the worktree's branch: a session's review reads its worktree's declarations); the
 *   other inputs are refs and files the owner already watches.
 */
export class OverlayMemo {
  private list: { stamp: string; worktrees: Worktree[] } | undefined;
  private readonly entries = new Map<string, { stamp: string; forkKey: string; entry: OverlayEntry }>();
  private readonly edits = new Map<string, { generation: number; specRoot: string; branch: string | null; watchers: TreeWatcher[] }>();
  /** Diagnostics: how often the list was re-read and entries were recomputed (each is git runs). */
  readonly stats = { lists: 0, entries: 0 };

  constructor(
    private readonly cwd: string,
    private readonly gitdir: string,
    private readonly onEdit: (branch: string | undefined) => void,
  ) {}

  /** The overlay as of now; git runs only for worktrees whose inputs moved since the last call. */
  async overlay(specRoot: string, configuredTrunk: string | null): Promise<OverlayEntry[]> {
    if (!hasLinkedWorktrees(this.gitdir)) {
      this.forgetAllBut(new Set());
      return [];
    }
    const worktrees = await this.worktrees();
    const trunk = trunkOf(worktrees, configuredTrunk);
    const trunkTip = trunk ? readTip(this.gitdir, `refs/heads/${trunk}`) : null;
    const linked = worktrees.filter((w) => !w.main);
    this.forgetAllBut(new Set(linked.map((w) => w.path)));
    return Promise.all(
      linked.map(async (w) => {
        // Watch before reading, so an edit that lands while git runs bumps the generation after it.
        const generation = this.watchEdits(w.path, specRoot, w.branch);
        const forkKey = `${w.head}|${trunk}@${trunkTip}`;
        const stamp = `${forkKey}|${w.branch}|${specRoot}|${generation}`;
        const hit = this.entries.get(w.path);
        if (hit?.stamp === stamp) return hit.entry;
        this.stats.entries++;
        try {
          // An edit leaves HEAD and trunk where they were, and so the fork point: skip its merge-base.
          const entry = await overlayEntry(w, trunk, specRoot, hit?.forkKey === forkKey ? hit.entry.forkPoint : undefined);
          this.entries.set(w.path, { stamp, forkKey, entry });
          return entry;
        } catch {
          // A worktree being made or removed (HEAD not yet a commit, its folder going): shown with no
          // changes and not remembered, so the next read, after its watchers fire, derives it again.
          this.entries.delete(w.path);
          return undiffedEntry(w);
        }
      }),
    );
  }

  close(): void {
    this.forgetAllBut(new Set());
  }

  private async worktrees(): Promise<Worktree[]> {
    const stamp = this.listStamp();
    if (this.list?.stamp !== stamp) {
      this.stats.lists++;
      this.list = { stamp, worktrees: await listWorktrees(this.cwd, this.gitdir) };
    }
    return this.list.worktrees;
  }

  /** Everything `git worktree list --porcelain` reports, read as files: no process. */
  private listStamp(): string {
    const admin = join(this.gitdir, 'worktrees');
    const parts = [this.resolveHead(this.gitdir)];
    let names: string[] = [];
    try {
      names = readdirSync(admin).sort();
    } catch {
      // No linked worktrees.
    }
    for (const name of names) parts.push(`${name}=${readText(join(admin, name, 'gitdir'))}:${this.resolveHead(join(admin, name))}`);
    return parts.join('\n');
  }

  private resolveHead(dir: string): string {
    const head = readText(join(dir, 'HEAD')).trim();
    if (!head.startsWith('ref: ')) return head;
    try {
      return `${head}@${readTip(this.gitdir, head.slice(5))}`;
    } catch {
      return head;
    }
  }

  /** Watches `<worktree>/<specRoot>` (and the worktree's top folder, for the spec root appearing). */
  private watchEdits(path: string, specRoot: string, branch: string | null): number {
    const have = this.edits.get(path);
    if (have?.specRoot === specRoot) {
      // A pooled worktree is given its session's branch when a spawn takes it.
      have.branch = branch;
      return have.generation;
    }
    for (const w of have?.watchers ?? []) w.close();
    const state = { generation: 0, specRoot, branch, watchers: [] as TreeWatcher[] };
    const bump = () => {
      state.generation++;
      this.onEdit(state.branch ?? undefined);
    };
    const specs = new TreeWatcher(join(path, specRoot), bump);
    const top = new TreeWatcher(
      path,
      (name) => {
        if (name !== specRoot) return;
        specs.rescan();
        bump();
      },
      { depth: 0 },
    );
    state.watchers.push(specs, top);
    this.edits.set(path, state);
    return 0;
  }

  private forgetAllBut(keep: ReadonlySet<string>): void {
    for (const [path, e] of this.edits) {
      if (keep.has(path)) continue;
      for (const w of e.watchers) w.close();
      this.edits.delete(path);
    }
    for (const path of this.entries.keys()) if (!keep.has(path)) this.entries.delete(path);
  }
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
