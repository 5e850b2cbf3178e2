import type { Outcome, Reading } from '../events/index.js';
import type { ScenarioDecl } from './scenarios.js';
import type { RemarkRef } from './scoreboard.js';

/**
 * The eval detail's wire shape (GET /api/eval/:scenario, `trellis eval show --json`): here, beside the
 * folds it is made of, so the store that builds it and the page that shows it import one declaration.
 */
export type DetailState = 'measured' | 'unmeasured' | 'absent-from-trunk';

export interface EvalDetail {
  readonly scenario: string;
  /** The scope answered for: the requested one, or `trunk` after a fallback. */
  readonly scope: string;
  /** Present when the requested scope no longer exists: the answer is trunk's, and says why. */
  readonly fallback?: 'trunk';
  readonly requested?: string;
  readonly reason?: string;
  readonly state: DetailState;
  /** Whether the answered scope's spec tree declares the scenario. */
  readonly declared: boolean;
  /** Live scopes whose spec tree declares it, trunk first. */
  readonly declaredIn: readonly string[];
  /** Scopes (live or gone) that hold readings of it, by name. */
  readonly measuredIn: readonly string[];
  readonly declaration: Pick<ScenarioDecl, 'node' | 'run' | 'timeoutS'> | null;
  /** The latest reading in the scope. */
  readonly reading: Reading | null;
  /** The last outcomes in the scope, newest first. */
  readonly last: readonly Outcome[];
  /** Every reading in the scope, newest first. */
  readonly readings: readonly Reading[];
  /** Open eval remarks against the scope's readings, and those on the scenario that name no reading. */
  readonly remarks: readonly RemarkRef[];
  /** Why the scenario's readings cannot be read, when they cannot: the state then counts none of them. */
  readonly problem?: string;
}
