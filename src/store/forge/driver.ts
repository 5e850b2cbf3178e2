import type { Issue, IssueEvent } from '../../projections/index.js';

/**
 * A forge driver: the only code that touches the network. It speaks one forge's API and hands back
 * issues already in the Issue shape (spec §2.1 rule 5): nothing past it knows which forge, or that there
 * is one.
 */
export interface ForgeDriver {
  /** The store name issues from this forge carry, and the prefix of their ids: `github.com`. */
  readonly store: string;
  /** Every issue (pull requests are not issues), with when each last changed. */
  list(): Promise<ForgeListing>;
  /** Creates an issue and returns its number and permalink. */
  create(input: { title: string; body: string }): Promise<{ number: number; url: string }>;
  comment(number: number, body: string): Promise<void>;
  /**
   * The issue's lifecycle from the forge's own timeline: closed, reopened and (where the forge records a
   * title change) edited, oldest first, in the Issue's terms; `opened` is the Issue's own `by`/`created`.
   * An event the driver cannot read is left out with a note.
   */
  timeline(number: number): Promise<{ events: IssueEvent[]; notes: string[] }>;
  close(number: number): Promise<void>;
  /**
   * What the driver knows after its last pull, as JSON, so the next process (the CLI's next run) pulls
   * only what changed since; absent on a driver that pulls whole (GitHub's, whose ETags do that job).
   */
  saveState?(): unknown;
  /** Takes back a saved state; one it cannot use is ignored and the next pull is whole. */
  restoreState?(state: unknown): void;
  /** Doctor's look at the forge: it answers, the token is accepted, the project is found. Never throws. */
  probe(): Promise<ProbeStep[]>;
}

/** One of doctor's checks of a forge, with its repair when it failed. */
export interface ProbeStep {
  readonly ok: boolean | 'warn';
  readonly what: string;
  readonly repair?: string;
}

export interface ForgeEntry {
  readonly issue: Issue;
  /** The forge's last-changed time of the issue: its share of the freshness stamp. */
  readonly updated: string;
}

export interface ForgeListing {
  readonly entries: readonly ForgeEntry[];
  /** One line per issue or comment left out because the driver cannot read it (forge, issue, field). */
  readonly notes: readonly string[];
  /** True when every page answered 304: nothing changed since the last listing. */
  readonly notModified: boolean;
  /** Requests made, and how many of them were 304s. */
  readonly requests: number;
  readonly notModifiedRequests: number;
}

/** `<host>#<number>`: a forge issue's id. */
export const forgeId = (store: string, number: number): string => `${store}#${number}`;

export function parseForgeId(id: string): { store: string; number: number } | null {
  const m = /^([^#\s/]+)#([1-9][0-9]{0,9})$/.exec(id);
  return m ? { store: m[1]!, number: Number(m[2]) } : null;
}
