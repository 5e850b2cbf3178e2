import { readdirSync, statSync, watch, type FSWatcher } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Watches a directory tree with one plain (non-recursive) watcher per directory. Node 20's
 * `recursive: true` on Linux watches each file's inode, so it goes deaf to a file once something
 * replaces it by rename — which is how git moves a ref and how most editors save. A directory watch
 * reports every entry created, renamed over, changed or removed in it.
 *
 * `onEvent` gets the path relative to `root`. Directories created later are picked up; if `root`
 * itself does not exist yet, nothing is watched until `rescan()` finds it.
 */
export class TreeWatcher {
  private readonly watchers = new Map<string, FSWatcher>();

  constructor(
    private readonly root: string,
    private readonly onEvent: (relPath: string) => void,
    private readonly opts: { depth?: number } = {},
  ) {
    this.rescan();
  }

  /** Adds watchers for directories that appeared (and drops those that went away). */
  rescan(): void {
    const seen = new Set<string>();
    this.walk(this.root, 0, seen);
    for (const [dir, w] of this.watchers) {
      if (!seen.has(dir)) {
        w.close();
        this.watchers.delete(dir);
      }
    }
  }

  close(): void {
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }

  get watching(): boolean {
    return this.watchers.has(this.root);
  }

  private walk(dir: string, depth: number, seen: Set<string>): void {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    seen.add(dir);
    if (!this.watchers.has(dir)) {
      try {
        const w = watch(dir, { persistent: false }, (event, name) => {
          const rel = relative(this.root, join(dir, String(name ?? '')));
          if (event === 'rename' && name && isDir(join(dir, String(name)))) this.rescan();
          this.onEvent(rel);
        });
        w.on('error', () => {
          w.close();
          this.watchers.delete(dir);
        });
        this.watchers.set(dir, w);
      } catch {
        return;
      }
    }
    if (this.opts.depth !== undefined && depth >= this.opts.depth) return;
    for (const e of entries) if (e.isDirectory() && !e.name.startsWith('.')) this.walk(join(dir, e.name), depth + 1, seen);
  }
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
