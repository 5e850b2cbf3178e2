/**
 * What the session supervisors follow of the server's live project: its change bus. The
 * board room's `LiveProject` is one; sessions sit below the board, so they declare the need rather than
 * import it.
 */
export interface ChangeFeed {
  readonly bus: {
    on(type: 'change', handler: (change: { readonly cause: string }) => void): void;
    off(type: 'change', handler: (change: { readonly cause: string }) => void): void;
  };
}
