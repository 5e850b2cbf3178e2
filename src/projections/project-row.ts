// The gateway's reconciled project list as `GET /projects` and `/projects/stream` answer it; pure, so the
// dashboard's host page imports it too (the store's project-list.ts builds it).

import type { InboxEntry } from './inbox.js';
import type { SpendSince } from './spend-periods.js';

/** One row of GET /projects. */
export interface ProjectRow {
  /** The slot, `encodeProject(root)`: the id in `/projects/:id` and `/p/:id`. */
  readonly id: string;
  readonly root: string;
  /** The registered host it runs on (issue 31), absent for a project of this machine. */
  readonly host?: string;
  readonly name: string;
  readonly icon: string | null;
  readonly cataloged: boolean;
  readonly online: boolean;
  /** Why it is offline, when it is. */
  readonly reason?: string;
  readonly url: string;
  readonly gate: 'admin' | 'open' | 'password' | 'loopback';
  readonly gated: boolean;
  /** Open issues of every store, the same count as the project's own page (its freshness stamp). */
  readonly openIssues?: number;
  /** Sessions holding a slot of the budget (starting, running, awaiting, review, merging). */
  readonly liveSessions?: number;
  /** The project's sessions that need a person (the host inbox), longest waiting first. */
  readonly inbox?: readonly InboxEntry[];
  /** What its sessions' models cost today and this week (UTC; the week from Monday), from its GET /api/cost. */
  readonly spend?: { readonly today: SpendSince; readonly week: SpendSince; readonly budgetUsdPerDay?: number | null };
}

export interface ProjectList {
  readonly projects: readonly ProjectRow[];
  readonly catalogError?: string;
  /** The registered remote hosts and where each one's SSH connection stands. */
  readonly hosts?: readonly RemoteHost[];
}

/** A registered host as the list shows it. */
export interface RemoteHost {
  readonly name: string;
  readonly destination: string;
  readonly state: 'connecting' | 'online' | 'offline';
  /** ssh's own words when offline. */
  readonly reason?: string;
  /** What to do about it (a host key to accept by hand). */
  readonly repair?: string;
}
