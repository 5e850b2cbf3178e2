import { openProject as openBare, type Project } from '../store/compose/open-project.js';
import { loopInSessions } from '../store/sessions/verbs/loop-in.js';

/** A project as every CLI verb opens it: replies loop in their thread's originating session. */
export const openProject = (cwd: string): Project => openBare(cwd, { sessions: loopInSessions });
