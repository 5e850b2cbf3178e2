import { join } from 'node:path';
import type { EvalProject } from '../eval/eval-project.js';
import { EvalStore } from '../eval/eval-store.js';
import { ForgeSlice, type DriverFactory } from '../forge/slice.js';
import { NO_SESSIONS, type IssuesProject, type SessionRegistry } from '../issues/issues-project.js';
import { ThreadStore } from '../issues/thread-store.js';
import type { ProjectContext } from '../project/context.js';
import { findRepository, type Repository } from '../project/repository.js';
import type { SessionsProject } from '../sessions/log/sessions-project.js';
import { projectCore, type CoreOptions } from './session-log-project.js';

export { NO_SESSIONS, type SessionRegistry } from '../issues/issues-project.js';

/**
 * Everything a verb needs about one repository, opened once per CLI run or server: the whole of what each
 * resource's room declares it needs (the context in `project/context.ts`, extended room by room).
 */
export type Project = ProjectContext & IssuesProject & EvalProject & SessionsProject;

export interface ProjectOptions extends CoreOptions {
  readonly drivers?: DriverFactory;
  /**
   * Who a reply loops in: a registry, or one made for the project being opened (the entry points pass
   * the session room's, `loopInSessions`, which needs the whole project). None: nobody is online.
   */
  readonly sessions?: SessionRegistry | ((project: Project) => SessionRegistry);
}

export function openProject(cwd: string, opts: ProjectOptions = {}): Project {
  return projectAt(findRepository(cwd), opts);
}

export function projectAt(repo: Repository, opts: ProjectOptions = {}): Project {
  const { core, log, cacheOf, data, readSettings } = projectCore(repo, opts);
  // A registry made for this project, on first use (it needs the project, which is being made here).
  let registry: SessionRegistry | undefined;
  const sessions = (): SessionRegistry => (registry ??= (opts.sessions as (project: Project) => SessionRegistry)(project));
  const project: Project = {
    ...core,
    forges: new ForgeSlice(readSettings, opts.drivers, join(data, 'cache')),
    forgeReads: 'live',
    sessions: typeof opts.sessions === 'function' ? { isOnline: (id) => sessions().isOnline(id), notify: (id, m) => sessions().notify(id, m) } : (opts.sessions ?? NO_SESSIONS),
    threads: new ThreadStore(log, cacheOf('issues')),
    evals: new EvalStore(log, cacheOf('evals')),
  };
  return project;
}
