import type { EvalProject } from '../../eval/eval-project.js';
import type { ProjectContext } from '../../project/context.js';
import type { SessionLog } from './session-log.js';
import type { SessionWork } from './session-work.js';

/** What the session verbs need of a project: the session log, and the issues and evals a session works on. */
export interface SessionsProject extends EvalProject {
  /** The session log (`refs/trellis/sessions/`): the same stream store, of the session kind. */
  readonly sessionLog: SessionLog;
  /** This process's queue passes and input lanes for the project's sessions (one per opened project). */
  readonly sessionWork: SessionWork;
}

/**
 * What an agent's hook needs of a project (the signal verb and what it calls: its session's log, the held
 * prompts it delivers, an exited agent's last screen as evidence): no issue, eval or forge store. The command
 * hook opens only this (store/compose/session-log-project.ts), so it loads none of their code (issue 40).
 */
export type SessionLogProject = ProjectContext & Pick<SessionsProject, 'sessionLog' | 'sessionWork' | 'evidence'>;
