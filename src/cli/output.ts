/**
 * Output for verbs whose stdout is unbounded (`issues --json`, `board`, ...). They never call
 * `process.exit()`: past ~64 KB a pipe holds the rest in user space and exit would drop it
 * (npm/npm#17331). Instead they write, wait for the stream to take the bytes, and set `exitCode`.
 */
import type { Writable } from 'node:stream';
import { terminalText } from './terminal-text.js';

const isBrokenPipe = (err: unknown) => (err as { code?: string } | null)?.code === 'EPIPE';

/** The streams this process has used (and guarded): the ones its exit waits for. */
const used = new Set<Writable>();

/** Makes a reader that goes away early (`trellis issues --json | head`) no error of ours on `stream`. */
function guard(stream: Writable): Writable {
  if (!used.has(stream)) {
    used.add(stream);
    stream.on('error', (err) => {
      if (!isBrokenPipe(err)) throw err;
    });
  }
  return stream;
}

/**
 * Guards stdout and stderr now, for a command whose code may also write to them directly (the command line's
 * entries call it first). The command hook does not: it writes only through `write`, which guards the stream
 * it uses, so a hook that prints nothing never makes them (a pipe's stream loads node:net; issue 40's CPU per event).
 */
export function guardStdio(): void {
  guard(process.stdout);
  guard(process.stderr);
}

/** Writes `text` and resolves once the stream has handed it on (or the reader is gone). */
export function write(stream: Writable, text: string): Promise<void> {
  if (text === '') return Promise.resolve();
  guard(stream);
  return new Promise((resolve, reject) => {
    stream.write(text, (err) => (err && !isBrokenPipe(err) ? reject(err) : resolve()));
  });
}

/**
 * Whether this command line asked for machine output (`--json`, `--ansi`): then stdout is written byte
 * for byte; otherwise it is for a person and goes through terminalText. Set once, from the parsed
 * command line, before the verb runs.
 */
let machineOutput = false;
export const setMachineOutput = (on: boolean): void => {
  machineOutput = on;
};

/** A verb's answer on stdout: exact under --json, with control characters made visible otherwise. */
export const out = (text: string): Promise<void> => write(process.stdout, machineOutput ? text : terminalText(text));
/** Bytes that are machine output whatever the flags (`graph`, `export`): never altered. */
export const outData = (text: string): Promise<void> => write(process.stdout, text);
/** Errors, warnings and notes: always for a person. */
export const err = (text: string): Promise<void> => write(process.stderr, terminalText(text));

/** The one exit of every verb: wait until stdout and stderr are drained, then let the process end. */
export async function exitAfterFlush(code: number): Promise<void> {
  await Promise.all([...used].map(drained));
  process.exitCode = code;
}

function drained(stream: Writable): Promise<void> {
  if (!stream.writableNeedDrain) return Promise.resolve();
  return new Promise((resolve) => {
    stream.once('drain', resolve);
    stream.once('close', resolve);
  });
}
