import type { Settings } from './config.js';
import type { Repository } from './repository.js';

/**
 * What every resource of one project shares, and all the `project/` room holds: the repository, its
 * settings, the clock and randomness. It imports no resource; each resource's room extends it with the
 * stores it needs (`IssuesProject`, `EvalProject`, `SessionsProject`), and `compose/open-project.ts`
 * builds the whole.
 */
export interface ProjectContext extends Repository {
  /** The clock, handed in so tests and replays can pin it. */
  readonly now: () => Date;
  /** Random bytes for new ids, handed in for the same reason. */
  readonly random: (n: number) => Uint8Array;
  /** The resolved settings, read on first use: issue verbs work without (or despite) a trellis.json. */
  settings(): Settings;
}
