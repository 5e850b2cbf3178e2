import type { EvidenceStore } from '../evidence/evidence.js';
import type { ForgeSlice } from '../forge/slice.js';
import type { ProjectContext } from '../project/context.js';
import type { ReadingStreams } from './find-reading.js';
import type { ThreadStore } from './thread-store.js';

/** What the issue verbs need of a project: its threads and what a thread refers to or loops in. */
export interface IssuesProject extends ProjectContext {
  readonly threads: ThreadStore;
  readonly evidence: EvidenceStore;
  /** The forge issues this process holds. */
  readonly forges: ForgeSlice;
  /**
   * `live`: every read pulls the forges first (the CLI); `resident`: reads use the slice as it is and a
   * background refresh keeps it current (the server).
   */
  forgeReads: 'live' | 'resident';
  /** Who is online to be looped in on a reply: the live sessions of this project. */
  readonly sessions: SessionRegistry;
  /** The eval readings an issue may be filed about (read only). */
  readonly evals: ReadingStreams;
}

/**
 * The seam through which a reply loops in the thread's originator session, if it is online. The session
 * room, above this one, implements it (`sessions/loop-in.ts`); the entry points hand it in.
 */
export interface SessionRegistry {
  isOnline(sessionId: string): boolean | Promise<boolean>;
  notify(sessionId: string, message: string): Promise<void>;
}

export const NO_SESSIONS: SessionRegistry = { isOnline: () => false, notify: async () => {} };
