/**
 * The one list of the kinds of stream Trellis keeps under `refs/trellis/`: where each kind's refs live, the
 * change cause the live watcher announces when one moves, and whether `trellis sync` carries it. Stream
 * names are made (`streamRef`) and parsed (`parseStreamRef`) here and nowhere else: the stores, the
 * composition, the live watcher, sync and the change stream all read this list.
 */
export const STREAM_KINDS = [
  { kind: 'issues', refPrefix: 'refs/trellis/issues/', cause: 'issues', synced: true },
  { kind: 'sessions', refPrefix: 'refs/trellis/sessions/', cause: 'sessions', synced: true },
  { kind: 'evals', refPrefix: 'refs/trellis/evals/', cause: 'evals', synced: true },
  // A WIP ref is a snapshot of one machine's uncommitted worktree (source files, possibly secrets or large
  // build output), parented on a local branch: not an event log, two cannot be merged, so it never travels.
  { kind: 'wip', refPrefix: 'refs/trellis/wip/', cause: null, synced: false },
] as const;

export type StreamKindName = (typeof STREAM_KINDS)[number]['kind'];
/** The change causes stream kinds announce (the live watcher adds its own: forge, specs, config, …). */
export type StreamCause = NonNullable<(typeof STREAM_KINDS)[number]['cause']>;
/** The kinds that travel with `trellis sync`. */
export type SyncedKind = Extract<(typeof STREAM_KINDS)[number], { synced: true }>['kind'];

export const SYNCED_KINDS: readonly SyncedKind[] = STREAM_KINDS.filter((k) => k.synced).map((k) => k.kind as SyncedKind);

const BY_KIND = new Map(STREAM_KINDS.map((k) => [k.kind as StreamKindName, k]));

/** Where a kind's refs live: `refs/trellis/issues/`. */
export const refPrefixOf = (kind: StreamKindName): string => BY_KIND.get(kind)!.refPrefix;

/** A stream's full ref name: `refs/trellis/issues/<id>`. */
export const streamRef = (kind: StreamKindName, id: string): string => `${refPrefixOf(kind)}${id}`;

/** A stream's id as it may appear in a ref name: one path segment (an eval's ref key joins its scenario's with `+`). */
const STREAM_ID = /^[A-Za-z0-9_][A-Za-z0-9_.+-]*$/;

export interface ParsedStreamRef {
  readonly kind: StreamKindName;
  /** The stream's id; absent when the name below the prefix is not one stream's (a folder, a stray file). */
  readonly id?: string;
  /** The name is the ref's lock file (`<id>.lock`): a write to that stream is under way. */
  readonly lock: boolean;
  /** The change cause a move of this ref announces (null: no reader watches it). */
  readonly cause: StreamCause | null;
}

/**
 * The stream a ref name names: a full name (`refs/trellis/issues/a1`), or one relative to `refs/` as a
 * watcher of the refs folder sees it (`trellis/issues/a1.lock`). Undefined for anything that is not under
 * a stream kind's prefix.
 */
export function parseStreamRef(name: string): ParsedStreamRef | undefined {
  const full = name.startsWith('refs/') ? name : `refs/${name}`;
  for (const k of STREAM_KINDS) {
    const base = k.refPrefix.slice(0, -1);
    if (full !== base && !full.startsWith(k.refPrefix)) continue;
    const rest = full.slice(k.refPrefix.length);
    const lock = rest.endsWith('.lock');
    const id = lock ? rest.slice(0, -'.lock'.length) : rest;
    return { kind: k.kind, lock, cause: k.cause, ...(STREAM_ID.test(id) && !id.endsWith('.') ? { id } : {}) };
  }
  return undefined;
}
