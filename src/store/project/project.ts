import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { EvidenceStore } from '../evidence/evidence.js';
import { GitAppendLog } from '../git/append-log.js';
import { ProjectionCache } from '../streams/projection-cache.js';
import { ThreadStore } from '../issues/thread-store.js';
import { EvalStore } from '../eval/eval-store.js';
import { SessionLog } from '../sessions/session-log.js';
import { SessionWork } from '../sessions/session-work.js';
import { configStamp, loadSettings, type Settings } from './config.js';
import { ForgeSlice, type DriverFactory } from '../forge/slice.js';
import { findRepository, type Repository } from './repository.js';

/** Everything a verb needs about one repository, opened once per CLI run or server. */
export interface Project extends Repository {
  readonly threads: ThreadStore;
  /** Eval readings, one stream per scenario (DESIGN.md §12). */
  readonly evals: EvalStore;
  /** The session log (`refs/trellis/sessions/`): the same stream store, of the session kind. */
  readonly sessionLog: SessionLog;
  /** This process's queue passes and input lanes for the project's sessions (one per opened project). */
  readonly sessionWork: SessionWork;
  readonly evidence: EvidenceStore;
  /** The clock, handed in so tests and replays can pin it. */
  readonly now: () => Date;
  /** Random bytes for new ids, handed in for the same reason. */
  readonly random: (n: number) => Uint8Array;
  /** The resolved settings, read on first use: issue verbs work without (or despite) a trellis.json. */
  settings(): Settings;
  /** The forge issues this process holds. */
  readonly forges: ForgeSlice;
  /**
   * `live`: every read pulls the forges first (the CLI); `resident`: reads use the slice as it is and a
   * background refresh keeps it current (the server).
   */
  forgeReads: 'live' | 'resident';
  /** Who is online to be looped in on a reply: the live sessions of this project. */
  readonly sessions: SessionRegistry;
}

/** The seam through which a reply loops in the thread's originator session, if it is online. */
export interface SessionRegistry {
  isOnline(sessionId: string): boolean | Promise<boolean>;
  notify(sessionId: string, message: string): Promise<void>;
}

export const NO_SESSIONS: SessionRegistry = { isOnline: () => false, notify: async () => {} };

export interface ProjectOptions {
  readonly now?: () => Date;
  readonly random?: (n: number) => Uint8Array;
  readonly drivers?: DriverFactory;
  /**
   * Who a reply loops in: a registry, or one made for the project being opened (the entry points pass
   * the session layer's, `loopInSessions`; this module never imports that layer, which imports it).
   * None: nobody is online.
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
  // A registry made for this project, on first use (it needs the project, which is being made here).
  let registry: SessionRegistry | undefined;
  const sessions = (): SessionRegistry => (registry ??= (opts.sessions as (project: Project) => SessionRegistry)(project));
  const project: Project = {
    settings: readSettings,
    forges: new ForgeSlice(readSettings, opts.drivers, join(data, 'cache')),
    forgeReads: 'live',
    sessions: typeof opts.sessions === 'function' ? { isOnline: (id) => sessions().isOnline(id), notify: (id, m) => sessions().notify(id, m) } : (opts.sessions ?? NO_SESSIONS),
    ...repo,
    threads: new ThreadStore(log, new ProjectionCache(join(data, 'cache', 'issues.json'))),
    evals: new EvalStore(log, new ProjectionCache(join(data, 'cache', 'evals.json'))),
    sessionLog: new SessionLog(log, new ProjectionCache(join(data, 'cache', 'sessions.json'))),
    sessionWork: new SessionWork(),
    evidence: new EvidenceStore(join(data, 'evidence')),
    now: opts.now ?? (() => new Date()),
    random: opts.random ?? ((n) => new Uint8Array(randomBytes(n))),
  };
  return project;
}
