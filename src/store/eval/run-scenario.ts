import { spawn } from 'node:child_process';
import type { Outcome } from '../../events/index.js';

/** Output kept as evidence per run; past this the rest is dropped and the evidence says so. */
const MAX_OUTPUT_BYTES = 16 << 20;
const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export interface ScenarioRun {
  readonly outcome: Outcome;
  readonly durationMs: number;
  /** stdout and stderr interleaved as they arrived, with a closing note when trellis intervened. */
  readonly output: Buffer;
  readonly exitCode: number | null;
  readonly timedOut: boolean;
}

/**
 * Runs a scenario's command with `sh -c` in `cwd` (inside `sandbox`'s argv when given), in a process group of its own. At `timeoutS` the
 * whole group is killed (the command and everything it started) and the outcome is `error`; when the
 * shell exits on its own, whatever it left running in its group is killed too, so a run never leaves a
 * process behind. Exit 0 is `pass`, another exit code `fail`, anything that kept the command from
 * finishing (timeout, a signal, a command that cannot start) `error`.
 */
export function runScenario(command: string, opts: { cwd: string; timeoutS: number; env?: NodeJS.ProcessEnv; sandbox?: readonly string[] }): Promise<ScenarioRun> {
  const started = performance.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    const keep = (d: Buffer) => {
      if (size >= MAX_OUTPUT_BYTES) {
        truncated = true;
        return;
      }
      const part = d.length + size > MAX_OUTPUT_BYTES ? d.subarray(0, MAX_OUTPUT_BYTES - size) : d;
      truncated ||= part.length < d.length;
      chunks.push(part);
      size += part.length;
    };
    let timedOut = false;
    let spawnError: Error | undefined;
    let pid: number | undefined;
    const killGroup = () => {
      if (pid === undefined) return;
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // ESRCH: the group is already empty.
      }
    };
    // The command's group is not the terminal's foreground group, so Ctrl-C would not reach it: a
    // signal that ends this process ends the command's group first.
    const onSignal = (signal: NodeJS.Signals) => {
      killGroup();
      for (const s of SIGNALS) process.off(s, onSignal);
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    // Listening before the spawn: a signal that arrives while the shell starts its children is still
    // handled (on a later turn of the loop, when `pid` is set), never left to the default action.
    for (const s of SIGNALS) process.on(s, onSignal);
    // In a sandbox (a session's, issue 45): its argv runs `sh -c <command>` confined.
    const argv = [...(opts.sandbox ?? []), 'sh', '-c', command];
    const proc = spawn(argv[0]!, argv.slice(1), { cwd: opts.cwd, env: { ...process.env, ...opts.env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    pid = proc.pid;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, opts.timeoutS * 1000);
    proc.stdout.on('data', keep);
    proc.stderr.on('data', keep);
    proc.on('error', (err) => {
      spawnError = err;
      // Never started: no 'close' is owed, answer now.
      if (proc.pid === undefined) finish(null, null);
    });
    // The shell is done: anything it left running in its group would hold the pipes open and outlive the run.
    proc.on('exit', killGroup);
    let finished = false;
    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      for (const s of SIGNALS) process.off(s, onSignal);
      const durationMs = Math.round(performance.now() - started);
      const notes: string[] = [];
      if (truncated) notes.push(`[trellis: output truncated at ${MAX_OUTPUT_BYTES} bytes]`);
      if (timedOut) notes.push(`[trellis: killed with its process group after the ${opts.timeoutS} s timeout]`);
      else if (spawnError) notes.push(`[trellis: could not run the command: ${spawnError.message}]`);
      else if (signal) notes.push(`[trellis: the command was killed by ${signal}]`);
      const output = Buffer.concat([...chunks, ...(notes.length ? [Buffer.from(`${size ? '\n' : ''}${notes.join('\n')}\n`)] : [])]);
      const outcome: Outcome = timedOut || spawnError || code === null ? 'error' : code === 0 ? 'pass' : 'fail';
      resolve({ outcome, durationMs, output, exitCode: code, timedOut });
    };
    proc.on('close', finish);
  });
}
