import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One JSON line per measurement, so runs can be diffed and collected. */
export function report(name: string, fields: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ bench: name, ...fields })}\n`);
}

export const round = (ms: number): number => Math.round(ms * 100) / 100;

export function stats(samples: number[]): { median_ms: number; p95_ms: number; min_ms: number; n: number } {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return { median_ms: round(at(0.5)), p95_ms: round(at(0.95)), min_ms: round(s[0]!), n: s.length };
}

export async function time<T>(fn: () => Promise<T> | T): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

export async function repeat(n: number, fn: (i: number) => Promise<unknown> | unknown): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await time(() => fn(i))).ms);
  return out;
}

export function tempRepo(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-bench-'));
  execFileSync('git', ['init', '-q', '-b', 'main', dir]);
  execFileSync('git', ['-C', dir, 'config', 'user.name', 'Bench']);
  execFileSync('git', ['-C', dir, 'config', 'user.email', 'bench@example.com']);
  // A projection cache saved in the background (a reader's, after its read returned) can still be writing
  // into .git as the bench tears down: rmSync tries again on ENOTEMPTY.
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }) };
}

/** Runs a command to completion; resolves with its stdout, rejects on a non-zero exit. */
export function exec(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => (err += d));
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out).toString()) : reject(new Error(`${cmd} ${args.join(' ')}: ${code} ${err}`))));
  });
}
