import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { packageRoot } from '../package-root.js';

/** The built CLI's entry, run by host operations as a child of its own (never in the gateway's process). */
export const cliEntry = (): string => join(packageRoot().dir, 'dist', 'src', 'cli', 'bin.js');

export interface Transcript {
  readonly exitCode: number;
  /** stdout and stderr interleaved as they arrived, whole. */
  readonly transcript: string;
}

/** Runs `cmd args` with cwd `cwd` to completion, keeping its complete interleaved output. */
export function runTranscript(cmd: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<Transcript> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [Buffer.from(`$ ${[cmd === process.execPath ? 'trellis' : cmd, ...(cmd === process.execPath ? args.slice(1) : args)].join(' ')}\n`)];
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d: Buffer) => chunks.push(d));
    child.stderr.on('data', (d: Buffer) => chunks.push(d));
    child.on('error', (err) => resolve({ exitCode: 127, transcript: `${Buffer.concat(chunks).toString()}${err.message}\n` }));
    child.on('close', (code, signal) => resolve({ exitCode: code ?? (signal ? 128 : 1), transcript: Buffer.concat(chunks).toString() }));
  });
}

/** `trellis <args>` with cwd = root, through the real CLI. */
export const runTrellis = (root: string, args: readonly string[], env?: NodeJS.ProcessEnv): Promise<Transcript> =>
  runTranscript(process.execPath, [cliEntry(), ...args], root, env);

/** The environment of a host verb's child: the caller's, with the host's TRELLIS_HOME. */
export const hostEnv = (home: string, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv => ({ ...env, TRELLIS_HOME: home });
