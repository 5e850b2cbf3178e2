// The shapes of a spec node's history and of one version's diff, as the API answers them
// (`/api/specs/:id/history`, `/api/specs/:id/diff/:hash`); pure, so the dashboard imports them too.

export interface SpecVersion {
  readonly hash: string;
  readonly author: string;
  readonly date: string;
  readonly subject: string;
  /** The file's path in this version. */
  readonly path: string;
  /** The path it was renamed from, in a version that renamed it. */
  readonly previousPath?: string;
  readonly change: 'added' | 'modified' | 'renamed' | 'deleted' | 'copied';
}

export interface SpecDiff {
  readonly hash: string;
  readonly path: string;
  readonly previousPath?: string;
  readonly change: SpecVersion['change'];
  readonly additions: number;
  readonly deletions: number;
  /** Unified diff of the file in that version against its parent (all additions for the first). */
  readonly diff: string;
  /** The whole file as it read in that version; null when the version deleted it. */
  readonly text: string | null;
}
