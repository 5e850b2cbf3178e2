import type { IssuesProject } from '../issues/issues-project.js';
import type { EvalStore } from './eval-store.js';

/** What the eval verbs need of a project: the readings, and the threads their remarks live on. */
export interface EvalProject extends IssuesProject {
  /** Eval readings, one stream per scenario (DESIGN.md §12). */
  readonly evals: EvalStore;
}
