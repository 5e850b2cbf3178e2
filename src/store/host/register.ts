import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute } from 'node:path';
import { TrellisError } from '../../events/index.js';
import { runTranscript, runTrellis, type Transcript } from './run-cli.js';

/** The main checkout of the repository `dir` belongs to (a linked worktree resolves to it), or null. */
export function mainCheckout(dir: string): string | null {
  const r = spawnSync('git', ['rev-parse', '--path-format=absolute', '--git-common-dir', '--is-bare-repository'], { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) return null;
  const [common, bare] = r.stdout.trim().split('\n');
  if (bare === 'true' || !common || basename(common) !== '.git') return null;
  return realpathSync(dirname(common));
}

export interface RegisterRequest {
  readonly path: string;
  readonly gitInit?: boolean;
  readonly init?: { readonly harness?: string };
}

export type Prepared = { readonly ok: true; readonly root: string; readonly steps: readonly Transcript[] } | { readonly ok: false; readonly failed: Transcript; readonly steps: readonly Transcript[] };

/**
 * Everything registration does before the catalog is touched: check the folder, `git init` when asked,
 * normalize to the main checkout, and run the real `trellis init` when asked. A failed step stops here
 * with its exit code and whole transcript.
 */
export async function prepareRegistration(req: RegisterRequest, env?: NodeJS.ProcessEnv): Promise<Prepared> {
  if (!isAbsolute(req.path)) throw new TrellisError('INVALID_INPUT', `path must be absolute, not ${JSON.stringify(req.path)}`);
  if (!existsSync(req.path) || !statSync(req.path).isDirectory()) throw new TrellisError('INVALID_INPUT', `${req.path} is not an existing directory`);
  const steps: Transcript[] = [];
  let root = mainCheckout(req.path);
  if (!root) {
    // `needs` tells a page which of its own controls repairs this (the message speaks to the CLI and API).
    if (!req.gitInit) throw new TrellisError('INVALID_INPUT', `${req.path} is not in a git repository with a working tree; send gitInit: true (trellis projects add --git) to create one there`, { details: { needs: 'gitInit' } });
    const t = await runTranscript('git', ['init', '-q'], req.path, env);
    steps.push(t);
    if (t.exitCode !== 0) return { ok: false, failed: t, steps };
    root = mainCheckout(req.path);
    if (!root) throw new TrellisError('GIT_FAILED', `git init in ${req.path} did not make a repository`);
  }
  if (req.init) {
    const t = await runTrellis(root, ['init', ...(req.init.harness ? ['--harness', req.init.harness] : [])], env);
    steps.push(t);
    if (t.exitCode !== 0) return { ok: false, failed: t, steps };
  }
  return { ok: true, root, steps };
}
