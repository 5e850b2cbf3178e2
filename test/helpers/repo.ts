import { execFileSync, execSync, spawn, type SpawnOptions } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { endProcessesIn } from './processes.js';

export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const BIN = join(ROOT, 'dist/src/cli/bin.js');

const made: string[] = [];

/** A fresh git repository in a temp dir, removed by `cleanupRepos()`. */
export function tempRepo(opts: { commit?: boolean } = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-test-'));
  made.push(dir);
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'Test Author');
  git(dir, 'config', 'user.email', 'test@example.com');
  if (opts.commit !== false) {
    git(dir, 'commit', '-q', '--allow-empty', '-m', 'init');
  }
  return dir;
}

export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-test-'));
  made.push(dir);
  return dir;
}

export function cleanupRepos(): void {
  const dirs = made.splice(0);
  // An agent's last hook process, or a git it started, can still be writing as its tmux server goes.
  endProcessesIn(dirs);
  for (const d of dirs) rmSync(d, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
}

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', maxBuffer: 256 << 20 });
}

export interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI to completion. stdin is closed unless `input` is given. */
export function trellis(cwd: string, args: readonly string[], opts: { input?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Run> {
  return run(process.execPath, [BIN, ...args], { cwd, env: { ...testEnv(cwd), ...opts.env } }, opts.input);
}

export function testEnv(cwd: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, TRELLIS_HOME: join(cwd, '.trellis-home') };
  delete env.TRELLIS_SESSION;
  return env;
}

export function run(cmd: string, args: readonly string[], opts: SpawnOptions, input?: string): Promise<Run> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { ...opts, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout!.on('data', (d: Buffer) => out.push(d));
    child.stderr!.on('data', (d: Buffer) => err.push(d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolvePromise({ code, signal, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }));
    if (input !== undefined) child.stdin!.end(input);
  });
}

/** Asserts-friendly: the CLI's stdout, failing loudly with its stderr when it did not exit 0. */
export async function ok(cwd: string, args: readonly string[], opts: { input?: string; env?: NodeJS.ProcessEnv } = {}): Promise<string> {
  const r = await trellis(cwd, args, opts);
  if (r.code !== 0) throw new Error(`trellis ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

/**
 * `git fsck --strict`, throwing on a non-zero exit. Dangling objects are left out: a writer that loses a
 * compare-and-swap leaves its unreferenced commit behind for `git gc`, which is not damage.
 */
export function fsck(cwd: string): string {
  return execFileSync('git', ['fsck', '--strict', '--no-progress', '--no-dangling'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Runs a shell pipeline in `cwd` (for real shell pipes and redirections) and returns its stdout. */
export function shell(cwd: string, cmd: string): string {
  return execSync(cmd, { cwd, encoding: 'utf8', shell: '/bin/bash', env: testEnv(cwd) });
}
