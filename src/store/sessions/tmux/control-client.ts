import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { childProcess } from '../../lazy-builtins.js';
import { LineSplitter, parseControlLine } from './control-decode.js';
import type { PaneTarget } from './pane-target.js';

/** How far (seconds) tmux lets this client fall behind on a pane before it pauses the pane for it. */
export const PAUSE_AFTER_S = 2;

export interface ControlEvents {
  /** Bytes the pane wrote, decoded (empty when the client was made with `outputBytes: false`). */
  output(pane: string, bytes: Buffer): void;
  /** tmux paused a pane for this client (it fell behind `pause-after`); output in between is lost to it. */
  paused(pane: string): void;
  /** A window (`@N`) changed size or layout. */
  layout(window: string): void;
  /** A session was made or closed on the server (only a hub of linked windows listens: pane-hub.ts). */
  sessionsChanged?(): void;
  /** A format this client subscribed to (`refresh-client -B`) changed for `pane`. */
  subscription?(name: string, pane: string, value: string): void;
  /** This client is attached to a session now: the one it made, or another it was moved to. */
  attached?(): void;
  /** A window closed or left this client's session (`%window-close`, `%unlinked-window-close`). */
  windowClosed?(window: string): void;
  /** The client is gone: `%exit` (session closed, server gone) or the process ended. */
  exit(reason: string): void;
}

/** Called synchronously, in stream order, when a command's answer block ends. */
type Answer = (err: Error | null, lines: Buffer[]) => void;

/** The environment for a tmux client: never inside the user's own tmux (`$TMUX` would make tmux refuse to nest). */
export function tmuxEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.TMUX;
  delete env.TMUX_PANE;
  return env;
}

/**
 * How a control client is started so that it ends with this process however this process ends. tmux -C
 * does not reliably end when its stdin closes: a client the server still holds output for (a busy pane)
 * stays attached for good once its reader is gone (tmux 3.3a; issue 40: a stopped serve left them, and so
 * the tmux server, running). On Linux, util-linux's setpriv sets the parent-death signal and execs tmux
 * (same pid), so the kernel sends the client SIGTERM when this process dies, SIGKILL included. Elsewhere
 * (or without setpriv) only an exit this process lives through ends them (`endAllOnExit`).
 */
function launcher(): { command: string; prefix: string[] } {
  if (launch) return launch;
  const setpriv = process.platform === 'linux' ? (process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'setpriv')).find(executable) : undefined;
  launch = setpriv ? { command: setpriv, prefix: ['--pdeathsig', 'TERM', '--', 'tmux'] } : { command: 'tmux', prefix: [] };
  return launch;
}
let launch: { command: string; prefix: string[] } | undefined;
const executable = (path: string): boolean => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** The control clients running now: ended as this process exits (a detach by stdin may never come). */
const running = new Set<ChildProcessWithoutNullStreams>();
let hooked = false;
function endAllOnExit(proc: ChildProcessWithoutNullStreams): void {
  running.add(proc);
  proc.once('exit', () => running.delete(proc));
  if (hooked) return;
  hooked = true;
  process.once('exit', () => {
    for (const p of running) p.kill('SIGTERM');
  });
}

/**
 * One `tmux -C` control client attached to one session, with no terminal: its stdin takes commands (one
 * a line), its stdout gives `%begin`/`%end` blocks (answers, in the order the commands were sent) and
 * notifications (`%output`, `%pause`, `%exit`, ...). Pane bytes stay Buffers from the pipe to the caller.
 * Stopping it closes stdin and ends its process; it also ends when this process does (see launcher).
 */
export class ControlClient {
  private readonly proc: ChildProcessWithoutNullStreams;
  private readonly queue: Answer[] = [];
  private block: { tag: string; lines: Buffer[] } | null = null;
  private exited = false;
  private readonly splitter = new LineSplitter();

  /**
   * `outputBytes: false`: `output` only says a pane wrote (its bytes are neither decoded nor passed on).
   * `start`: the tmux command (argv) the client starts with, instead of attaching to `target.session`.
   */
  constructor(
    readonly target: PaneTarget,
    private readonly events: ControlEvents,
    private readonly opts: { outputBytes?: boolean; start?: readonly string[] } = {},
  ) {
    const { command, prefix } = launcher();
    const start = opts.start ?? ['attach-session', '-t', `=${target.session}`];
    this.proc = childProcess().spawn(command, [...prefix, '-S', target.socket, '-C', ...start], { stdio: ['pipe', 'pipe', 'pipe'], env: tmuxEnv() });
    endAllOnExit(this.proc);
    this.proc.stdout.on('data', (chunk: Buffer) => this.splitter.push(chunk, (line) => this.line(line)));
    this.proc.stderr.resume();
    this.proc.stdin.on('error', () => {});
    this.proc.on('error', (err) => this.finish(`tmux could not run: ${err.message}`));
    this.proc.on('close', (code, signal) => this.finish(`tmux control client ended (${signal ?? code})`));
    // Flow control: a pane this client lags on by more than PAUSE_AFTER_S is paused, not buffered without end.
    void this.command(`refresh-client -f pause-after=${PAUSE_AFTER_S}`).catch(() => {});
  }

  get alive(): boolean {
    return !this.exited;
  }

  /** The client's process id (tests check it is reaped). */
  get pid(): number | undefined {
    return this.proc.pid;
  }

  /**
   * Sends one tmux command line and resolves with its output lines; rejects with tmux's message on
   * `%error`, or when the client ends first.
   */
  command(line: string): Promise<Buffer[]> {
    return new Promise((resolve, reject) => this.send(line, [(err, lines) => (err ? reject(err) : resolve(lines))]));
  }

  /**
   * Sends one line holding `answers.length` commands (`a ; b`: tmux runs them in one pass, with no pane
   * output read in between) and calls each answer synchronously as its block ends, before any later
   * `%output` line is handled: what a snapshot needs to know exactly where the stream resumes.
   */
  send(line: string, answers: Answer[]): void {
    const fail = (msg: string) => queueMicrotask(() => answers.forEach((a) => a(new Error(msg), [])));
    if (this.exited) return fail('the tmux control client has ended');
    if (/[\r\n]/.test(line)) return fail('a control mode command is one line');
    this.queue.push(...answers);
    this.proc.stdin.write(`${line}\n`);
  }

  /**
   * Detaches: closes stdin and ends the client's process (SIGTERM: tmux tells its server it leaves), since
   * a client with output still pending may never act on its stdin closing; SIGKILL if it lingers a second.
   */
  stop(): void {
    if (this.exited || this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    this.proc.stdin.end();
    this.proc.kill('SIGTERM');
    const kill = setTimeout(() => this.proc.kill('SIGKILL'), 1000);
    kill.unref();
    this.proc.once('exit', () => clearTimeout(kill));
  }

  private line(line: Buffer): void {
    if (this.block) {
      const parsed = line[0] === 0x25 ? parseControlLine(line) : null;
      if (parsed && (parsed.kind === 'end' || parsed.kind === 'error') && parsed.tag === this.block.tag) {
        const { lines } = this.block;
        this.block = null;
        const answer = this.queue.shift();
        answer?.(parsed.kind === 'end' ? null : new Error(lines.map((l) => l.toString()).join('\n') || 'tmux refused the command'), lines);
        return;
      }
      this.block.lines.push(Buffer.from(line));
      return;
    }
    const parsed = parseControlLine(line, this.opts.outputBytes ?? true);
    switch (parsed.kind) {
      case 'output':
        return this.events.output(parsed.pane, parsed.bytes);
      case 'begin':
        // Blocks not marked ours (the attach command itself) are read and dropped.
        this.block = { tag: parsed.tag, lines: [] };
        if (!parsed.ours) this.queue.unshift(() => {});
        return;
      case 'pause':
        return this.events.paused(parsed.pane);
      case 'layout':
        return this.events.layout(parsed.window);
      case 'sessions-changed':
        return this.events.sessionsChanged?.();
      case 'session-changed':
        return this.events.attached?.();
      case 'subscription':
        return this.events.subscription?.(parsed.name, parsed.pane, parsed.value);
      case 'window-close':
        return this.events.windowClosed?.(parsed.window);
      case 'exit':
        return this.finish(parsed.reason || 'detached');
      default:
        return;
    }
  }

  private finish(reason: string): void {
    if (this.exited) return;
    this.exited = true;
    for (const answer of this.queue.splice(0)) answer(new Error(reason), []);
    this.proc.stdin.end();
    this.events.exit(reason);
  }
}
