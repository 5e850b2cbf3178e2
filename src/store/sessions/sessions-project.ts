import type { EvalProject } from '../eval/eval-project.js';
import type { SessionLog } from './session-log.js';
import type { SessionWork } from './session-work.js';

/** What the session verbs need of a project: the session log, and the issues and evals a session works on. */
export interface SessionsProject extends EvalProject {
  /** The session log (`refs/trellis/sessions/`): the same stream store, of the session kind. */
  readonly sessionLog: SessionLog;
  /** This process's queue passes and input lanes for the project's sessions (one per opened project). */
  readonly sessionWork: SessionWork;
}
