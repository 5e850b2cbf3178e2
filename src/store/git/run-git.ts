import { childProcess } from '../lazy-builtins.js';
import { TrellisError } from '../../events/index.js';

export interface GitResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs git in `cwd` and resolves with its output whatever the exit code; spawn failures reject. */
export function gitRaw(cwd: string, args: readonly string[], env?: NodeJS.ProcessEnv): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    childProcess().execFile('git', args, { cwd, maxBuffer: 512 << 20, encoding: 'utf8', ...(env ? { env } : {}) }, (err, stdout, stderr) => {
      if (err && typeof (err as { code?: unknown }).code !== 'number') {
        reject(new TrellisError('GIT_FAILED', `cannot run git: ${err.message}`));
        return;
      }
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** Runs git in `cwd`; a non-zero exit is a GIT_FAILED error carrying git's own message. */
export async function git(cwd: string, args: readonly string[]): Promise<string> {
  const r = await gitRaw(cwd, args);
  if (r.code !== 0) throw new TrellisError('GIT_FAILED', `git ${args[0]} failed: ${r.stderr.trim().split('\n')[0] ?? `exit ${r.code}`}`);
  return r.stdout;
}
