import { TrellisError } from '../../events/index.js';
import type { KnownProject } from './project-list.js';
import { hostEnv, runTrellis, type Transcript } from './run-cli.js';
import { startDetachedServe } from './start-serve.js';

/** The real `trellis init` in a project, as a child of its own, with its exit code and whole transcript. */
export const runInit = (home: string, root: string, opts: { harness?: string } = {}, env?: NodeJS.ProcessEnv): Promise<Transcript> =>
  runTrellis(root, ['init', ...(opts.harness !== undefined ? ['--harness', opts.harness] : [])], hostEnv(home, env));

/** The real `trellis doctor` in a project, with its exit code and whole transcript. */
export const runDoctor = (home: string, root: string, env?: NodeJS.ProcessEnv): Promise<Transcript> => runTrellis(root, ['doctor'], hostEnv(home, env));

export interface Served {
  readonly online: true;
  readonly url: string;
  readonly pid: number;
  /** Where the gateway proxies it. */
  readonly proxy: string;
}

/** Starts a detached `trellis serve` for a project (or finds it online); SERVE_FAILED with the log's tail when it does not come online. */
export async function serveProject(home: string, project: KnownProject, env?: NodeJS.ProcessEnv): Promise<Served> {
  const started = await startDetachedServe(home, project.root, { env: hostEnv(home, env) });
  if ('record' in started) return { online: true, url: started.record.url, pid: started.record.pid, proxy: `/p/${project.id}/` };
  throw new TrellisError('SERVE_FAILED', 'the backend did not come online; the log tail says why', { details: { logTail: started.logTail } });
}
