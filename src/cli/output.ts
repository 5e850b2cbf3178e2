/**
 * Output for verbs whose stdout is unbounded (`issues --json`, `board`, ...). They never call
 * `process.exit()`: past ~64 KB a pipe holds the rest in user space and exit would drop it
 * (npm/npm#17331). Instead they write, wait for the stream to take the bytes, and set `exitCode`.
 *
 * A verb's text goes straight to file descriptor 1 or 2 (a blocking write: every byte is handed on before
 * it returns), not through `process.stdout`/`process.stderr`: making those streams on a pipe loads `net`
 * and builds two sockets, ~5 ms of CPU at every start (issue 40), for bytes a write(2) hands on as well.
 * The stream is used where a direct write cannot go: a descriptor opened non-blocking whose reader is
 * behind (EAGAIN: the rest, and what follows until it drains, goes through the stream, which waits), or a
 * stream someone else made that still holds bytes (written after them, never ahead).
 */
import { writeSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { terminalText } from './terminal-text.js';

const isBrokenPipe = (err: unknown) => (err as { code?: string } | null)?.code === 'EPIPE';
const onError = (err: Error) => {
  if (!isBrokenPipe(err)) throw err;
};

type Std = 'stdout' | 'stderr';
/** The standard streams made so far (by output.ts or anyone else: console.log makes one too). */
const made = new Set<Std>();
/** A descriptor whose reader went away: nothing more is written to it. */
const gone = new Set<Std>();

// A reader that goes away early (`trellis issues --json | head`) is not an error of ours: whoever makes a
// standard stream (console.log does too), it gets this listener, as when it was made here at load.
for (const name of ['stdout', 'stderr'] as const) {
  const d = Object.getOwnPropertyDescriptor(process, name);
  if (!d?.get || !d.configurable) {
    process[name].on('error', onError);
    made.add(name);
    continue;
  }
  const get = d.get;
  let stream: NodeJS.WriteStream | undefined;
  Object.defineProperty(process, name, {
    ...d,
    get() {
      if (!stream) {
        stream = get.call(process) as NodeJS.WriteStream;
        stream.on('error', onError);
        made.add(name);
      }
      return stream;
    },
  });
}

/** Writes `text` and resolves once the stream has handed it on (or the reader is gone). */
export function write(stream: Writable, text: string | Uint8Array): Promise<void> {
  if (text.length === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    stream.write(text, (err) => (err && !isBrokenPipe(err) ? reject(err) : resolve()));
  });
}

/** Writes `text` to stdout or stderr: to its descriptor when nothing waits in its stream, else through the stream. */
function put(name: Std, text: string): Promise<void> {
  if (text === '' || gone.has(name)) return Promise.resolve();
  if (made.has(name) && process[name].writableLength > 0) return write(process[name], text);
  const bytes = Buffer.from(text, 'utf8');
  let at = 0;
  try {
    while (at < bytes.length) at += writeSync(name === 'stdout' ? 1 : 2, bytes, at);
    return Promise.resolve();
  } catch (err) {
    if (isBrokenPipe(err)) {
      gone.add(name);
      return Promise.resolve();
    }
    if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') return Promise.reject(err);
    return write(process[name], bytes.subarray(at));
  }
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
export const out = (text: string): Promise<void> => put('stdout', machineOutput ? text : terminalText(text));
/** Bytes that are machine output whatever the flags (`graph`, `export`): never altered. */
export const outData = (text: string): Promise<void> => put('stdout', text);
/** Errors, warnings and notes: always for a person. */
export const err = (text: string): Promise<void> => put('stderr', terminalText(text));

/** The one exit of every verb: wait until stdout and stderr are drained, then let the process end. */
export async function exitAfterFlush(code: number): Promise<void> {
  // A direct write is already handed on; only a stream that was made can hold bytes.
  await Promise.all((['stdout', 'stderr'] as const).filter((name) => made.has(name)).map((name) => drained(process[name])));
  process.exitCode = code;
}

function drained(stream: Writable): Promise<void> {
  if (!stream.writableNeedDrain) return Promise.resolve();
  return new Promise((resolve) => {
    stream.once('drain', resolve);
    stream.once('close', resolve);
  });
}
