/**
 * The host inventory's wire shape (GET /api/resources): declared here so the store that measures it and
 * the page that shows it share one declaration (the dashboard imports no store module).
 */
export interface ResourceInventory {
  readonly at: string;
  readonly cpus: number;
  readonly load: readonly number[];
  readonly memory: { readonly totalBytes: number; readonly freeBytes: number };
  readonly disk: { readonly path: string; readonly totalBytes: number; readonly freeBytes: number } | null;
  /** Running and queued sessions and the budget (`sessions.max`, `sessions.minFreeMb`); the warm worktree pool. */
  readonly sessions: { readonly running: number; readonly queued: number; readonly budget: number; readonly minFreeMb: number; readonly pool?: PoolReport };
}

export interface PoolReport {
  readonly dir: string;
  /** `sessions.pool`: how many the pool keeps. */
  readonly size: number;
  readonly ready: number;
  /** Ready worktrees at an older commit than trunk's tip (moved forward at the next refill or claim). */
  readonly behind: number;
  /** Worktrees that are not ready (being made, claimed, or left by a crash). */
  readonly other: number;
  readonly bytes: number;
}
