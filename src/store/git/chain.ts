/**
 * A log is a chain of commits, one payload (`event.json`) each, joined where two clones wrote to it by
 * merge commits (two parents, no payload). Readers walk every parent and return the entries from just
 * after `stopAt` (or the root) up to `tip`: oldest first along a linear chain; in walk order across a
 * merge, where the reader starts over from the root (reachedStop false) and the caller folds in its own
 * order (see dag-walk.ts). They know commits and bytes, never issues.
 */
export interface ChainEntry {
  readonly oid: string;
  readonly bytes: Uint8Array;
}

export interface ChainRequest {
  readonly tip: string;
  /** A commit already folded by the caller; reading stops there. null reads to the root. */
  readonly stopAt: string | null;
}

export type ChainResult =
  | {
      readonly ok: true;
      readonly entries: readonly ChainEntry[];
      /** False when `stopAt` was given but is not an ancestor of `tip` (history was rewritten). */
      readonly reachedStop: boolean;
    }
  | { readonly ok: false; readonly oid: string; readonly reason: string };

export interface ChainReader {
  read(requests: readonly ChainRequest[]): Promise<ChainResult[]>;
  /**
   * Hands each chain's result to `onResult` (with its index in `requests`) as soon as it is read, in any
   * order, so a caller can fold it and let its bytes go; resolves once every request has had its answer.
   */
  readEach?(requests: readonly ChainRequest[], onResult: (index: number, result: ChainResult) => void): Promise<void>;
}

export const PAYLOAD = 'event.json';
