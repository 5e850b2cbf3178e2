import { crypto } from '../lazy-builtins.js';
import { join } from 'node:path';
import { EvidenceStore } from '../evidence/evidence.js';
import { GitAppendLog } from '../git/append-log.js';
import { configStamp, loadSettings, type Settings } from '../project/config.js';
import { findRepository, type Repository } from '../project/repository.js';
import { SessionLog } from '../sessions/log/session-log.js';
import type { SessionLogProject } from '../sessions/log/sessions-project.js';
import { SessionWork } from '../sessions/log/session-work.js';
import { ProjectionCache } from '../streams/projection-cache.js';
import type { StreamKindName } from '../streams/stream-names.js';

/*
 * The part of a project every opening shares (open-project.ts builds the whole one on it), and all the
 * command hook opens: settings, the append log, the session log, the work lanes and evidence. Apart so
 * the hook's `trellis session signal` loads no issue, eval or forge code (issue 40: its CPU per event).
 */

export interface CoreOptions {
  readonly now?: () => Date;
  readonly random?: (n: number) => Uint8Array;
}

/** The shared core of a project at `repo`, with the append log and the cache maker the whole project reuses. */
export function projectCore(repo: Repository, opts: CoreOptions = {}) {
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
  const core: SessionLogProject = {
    settings: readSettings,
    ...repo,
    sessionLog: new SessionLog(log, cacheOf('sessions')),
    sessionWork: new SessionWork(),
    evidence: new EvidenceStore(join(data, 'evidence')),
    now: opts.now ?? (() => new Date()),
    random: opts.random ?? ((n) => new Uint8Array(crypto().randomBytes(n))),
  };
  return { core, log, cacheOf, data, readSettings };
}

/** The project as the command hook opens it: its session log, no issue stores. */
export const openSessionLogProject = (cwd: string): SessionLogProject => projectCore(findRepository(cwd)).core;
