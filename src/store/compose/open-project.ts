import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { EvalProject } from '../eval/eval-project.js';
import { EvalStore } from '../eval/eval-store.js';
import { EvidenceStore } from '../evidence/evidence.js';
import { SessionWork } from '../sessions/session-work.js';
import { ForgeSlice, type DriverFactory } from '../forge/slice.js';
import { GitAppendLog } from '../git/append-log.js';
import { NO_SESSIONS, type IssuesProject, type SessionRegistry } from '../issues/issues-project.js';
import { ThreadStore } from '../issues/thread-store.js';
import { configStamp, loadSettings, type Settings } from '../project/config.js';
import type { ProjectContext } from '../project/context.js';
import { findRepository, type Repository } from '../project/repository.js';
import type { SessionsProject } from '../sessions/sessions-project.js';
import { SessionLog } from '../sessions/session-log.js';
import { ProjectionCache } from '../streams/projection-cache.js';
import type { StreamKindName } from '../streams/stream-names.js';

export { NO_SESSIONS, type SessionRegistry } from '../issues/issues-project.js';

/**
 * Everything a verb needs about one repository, opened once per CLI run or server: the whole of what each
 * resource's room declares it needs (the context in `project/context.ts`, extended room by room).
 */
export type Project = ProjectContext & IssuesProject & EvalProject & SessionsProject;

export interface ProjectOptions {
  readonly now?: () => Date;
  readonly random?: (n: number) => Uint8Array;
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
  const data = join(repo.gitdir, 'trellis');
  let settings: { key: string; value: Settings } | undefined;
  const readSettings = () => {
    // Re-read when either config file changed: a long-running server follows edits to them.
    const key = configStamp(repo.root);
    if (settings?.key !== key) settings = { key, value: loadSettings(repo.root) };
    return settings.value;
  };
  const log = new GitAppendLog(repo.gitdir);
  // Each kind's folded projections are cached under the kind's name in the one list (stream-names.ts).
  const cacheOf = <S>(kind: StreamKindName) => new ProjectionCache<S>(join(data, 'cache', `${kind}.json`));
  // A registry made for this project, on first use (it needs the project, which is being made here).
  let registry: SessionRegistry | undefined;
  const sessions = (): SessionRegistry => (registry ??= (opts.sessions as (project: Project) => SessionRegistry)(project));
  const project: Project = {
    settings: readSettings,
    forges: new ForgeSlice(readSettings, opts.drivers, join(data, 'cache')),
    forgeReads: 'live',
    sessions: typeof opts.sessions === 'function' ? { isOnline: (id) => sessions().isOnline(id), notify: (id, m) => sessions().notify(id, m) } : (opts.sessions ?? NO_SESSIONS),
    ...repo,
    threads: new ThreadStore(log, cacheOf('issues')),
    evals: new EvalStore(log, cacheOf('evals')),
    sessionLog: new SessionLog(log, cacheOf('sessions')),
    sessionWork: new SessionWork(),
    evidence: new EvidenceStore(join(data, 'evidence')),
    now: opts.now ?? (() => new Date()),
    random: opts.random ?? ((n) => new Uint8Array(randomBytes(n))),
  };
  return project;
}
