import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { isTrellisError, TrellisError } from '../events/index.js';
import { healthAnswers } from './health-probe.js';

export interface ChildHandle {
  readonly id: number;
  readonly pid: number;
  readonly port: number;
  readonly process: ChildProcess;
  readonly exited: Promise<number | null>;
}

export interface BootOptions {
  readonly entry: string;
  readonly id: number;
  readonly env: NodeJS.ProcessEnv;
  /** The whole boot (spawn, listen, first healthy /health) must fit in this. */
  readonly bootMs: number;
}

/** A child that could not be brought up (BOOT_FAILED); the message is what the log says. */
export const bootFailed = (message: string): TrellisError => new TrellisError('BOOT_FAILED', message);
export const isBootFailure = (err: unknown): err is TrellisError => isTrellisError(err) && err.code === 'BOOT_FAILED';

/**
 * Spawns an HTTP child and waits until it listens and answers GET /health. Anything less within
 * `bootMs` (it crashes, exits, never listens, or never answers) kills it and rejects with the reason.
 */
export async function bootChild(opts: BootOptions): Promise<ChildHandle> {
  const proc = fork(opts.entry, [], { env: { ...opts.env, TRELLIS_CHILD_ID: String(opts.id) }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = once(proc, 'exit').then(([code]) => code as number | null);
  const how = () => (proc.signalCode ? `was killed by ${proc.signalCode}` : `exited with code ${proc.exitCode}`);
  const deadline = Date.now() + opts.bootMs;
  const fail = async (reason: string): Promise<never> => {
    proc.kill('SIGKILL');
    await exited;
    throw bootFailed(`child ${opts.id} ${reason}`);
  };
  const port = await Promise.race([
    new Promise<number>((resolve) => proc.on('message', (m: { type?: string; port?: number }) => m?.type === 'listening' && resolve(m.port!))),
    exited.then(() => -1),
    new Promise<number>((resolve) => setTimeout(() => resolve(0), opts.bootMs).unref()),
  ]);
  if (port < 0) return fail(`${how()} before listening (its error is above)`);
  if (port === 0) return fail(`did not listen within ${opts.bootMs} ms`);
  while (Date.now() < deadline) {
    if (proc.exitCode !== null || proc.signalCode !== null) return fail(`${how()} before answering /health`);
    // Not up yet: try again until the deadline.
    if (await healthAnswers(port, Math.max(50, deadline - Date.now()))) return { id: opts.id, pid: proc.pid!, port, process: proc, exited };
    await new Promise((r) => setTimeout(r, 50));
  }
  return fail(`did not answer GET /health within ${opts.bootMs} ms`);
}

/** Asks a child to drain (finish in-flight requests, close, exit); kills it if it has not by the deadline. */
export async function drainChild(child: ChildHandle, deadlineMs: number): Promise<void> {
  if (child.process.exitCode !== null) return;
  try {
    child.process.send({ type: 'drain', deadlineMs });
  } catch {
    // the IPC channel is gone: the child is on its way out already
  }
  const killer = setTimeout(() => child.process.kill('SIGKILL'), deadlineMs + 2_000);
  killer.unref();
  await child.exited;
  clearTimeout(killer);
}
