import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { isTrellisError } from '../../../../events/index.js';
import type { SessionsProject } from '../../log/sessions-project.js';
import { AppServerClient, confinedFiles, makeProtocolDir, protocolFiles, serveControl, type ControlReply } from './codex-app-server.js';
import { APPROVAL_REQUESTS, appServerSupported, decisionNames, decisionValue } from './codex-protocol.js';
import type { SessionRuntime } from '../../log/session-runtime.js';
import { appendCommand } from '../../log/session-append.js';
import { mainRoot } from '../../worktrees/worktree.js';
import { askFirstRun } from './codex-first-run.js';
import { UsageHold } from './codex-usage-hold.js';
import { endPrevious, readPid } from './codex-previous.js';

/** Statuses in which the session's codex should be alive and watched. */
const WATCHED = new Set(['starting', 'running', 'awaiting', 'review', 'merging']);
/** How long the app-server may take to listen, and the launch to be logged. */
const UP_MS = 20_000;
/** A turn that says nothing for this long is `awaiting{stalled}` (TRELLIS_CODEX_STALL_MS overrides; never retried). */
const STALL_MS = 10 * 60_000;
/** How often the session's own end (closed, its pane gone) and a stall are checked. */
const CHECK_MS = 1_000;
/** How long a token-usage update waits for the next signal to record it in that signal's own append (see UsageHold; TRELLIS_CODEX_USAGE_HOLD_MS overrides, 0 none: the bench's side by side). */
const USAGE_HOLD_MS = 750;
/** Other names people give the two usual decisions. */
const ALIASES: Readonly<Record<string, string>> = { approve: 'accept', yes: 'accept', allow: 'accept', deny: 'decline', no: 'decline', reject: 'decline' };

export type CodexWatchEnd = 'refused' | 'closed' | 'gone' | 'replaced' | 'server-ended';

/**
 * Codex over its app-server (issue 41), run beside the TUI in the session's pane (`trellis session
 * watch-codex`): starts the session's own `codex app-server` on a unix socket in its folder (0700),
 * connects as a client, starts the thread (a resume: resumes the session's) and the task's turn, and
 * writes the thread id for the pane, whose TUI then attaches (`codex --remote … resume <thread>`). From
 * then on what the server says is recorded (source `protocol`); approvals wait here for a decision by
 * name from the control socket (`session answer`); a turn silent past its bound is `awaiting{stalled}`.
 * The server's end is the session's: the agent is stopped, said so, never left `running` (the TUI only
 * draws "Reconnecting…"). An older Codex or a server that refuses writes `refused`: the pane falls back
 * to the notify path. Ends (its server with it) once the session is not live, its pane gone or replaced.
 */
export async function watchCodex(p: SessionsProject, rt: SessionRuntime, id: string, opts: {
    resume: boolean;
    log: (line: string) => void;
    /** Records one protocol event as `trellis session signal` would (and reacts to it): what was ignored. */
    signal: (event: string, payload: unknown, how: { fromPane?: string; source: 'protocol' }) => Promise<readonly string[]>;
  },
): Promise<CodexWatchEnd> {
  const env = rt.env;
  const files = protocolFiles(makeProtocolDir(id, env));
  const myPane = env.TMUX_PANE || undefined;
  // Confined (issue 41): the app-server runs inside the sandbox, and its bridge reaches this watcher's socket in the relay folder.
  const meet = env.TRELLIS_CODEX_RELAY ? confinedFiles(env.TRELLIS_CODEX_RELAY) : null;
  const refused = meet?.refused ?? files.refused;
  const refuse = (why: string): CodexWatchEnd => {
    writeFileSync(refused, `${why}\n`);
    if (meet) writeFileSync(files.refused, `${why}\n`);
    opts.log(`codex app-server path refused, the notify path instead: ${why}`);
    return 'refused';
  };
  const version = await codexVersion(env);
  if (!appServerSupported(version)) return refuse(`Codex ${version || '(no version)'} is older than the app-server path needs (0.169.0)`);
  // A unix socket's path has a 108-byte bound.
  if (Buffer.byteLength(files.control) > 100) return refuse(`the session's folder ${files.control} is too long a path for a unix socket`);
  const start = await p.sessionLog.get(id);
  // A resume's watcher: the previous launch's may not have stopped its server yet (it notices a second
  // later, or never on a loaded machine), and codex refuses a second server on the same socket path.
  const previous = readPid(files.watcher);
  writeFileSync(files.watcher, String(process.pid));
  await endPrevious(files, id, previous);
  rmSync(files.socket, { force: true });
  // Unconfined, the server is this watcher's child; confined, the sandbox's (its end is the bridge's).
  const server = meet ? null : spawn('codex', ['app-server', '--listen', `unix://${files.socket}`], { cwd: start.worktree, env, stdio: ['ignore', 'ignore', openSync(files.log, 'a')], detached: true });
  const serverEnd = new Promise<string>((resolve) => {
    server?.once('exit', (code, signal) => resolve(signal ? `was killed (${signal})` : `exited ${code}`));
    server?.once('error', (err) => resolve(`could not start: ${err.message}`));
  });
  if (server?.pid) writeFileSync(files.pid, String(server.pid));
  const held: { control: Server | null; bridge: Server | null } = { control: null, bridge: null };
  const bridged = meet ? listenForBridge(meet.bridge, held) : null;
  if (meet) writeFileSync(meet.go, '');
  try {
    return await watch();
  } finally {
    held.control?.close();
    held.bridge?.close();
    if (server) stop(server);
    // The folder is a newer watcher's once it names that one (a resume's): its files are not ours to remove.
    if (readPid(files.watcher) === process.pid) for (const f of [files.control, files.pending, files.ready, files.pid, files.watcher, files.stats]) rmSync(f, { force: true });
  }

  async function watch(): Promise<CodexWatchEnd> {
    const pending = new Map<number | string, { method: string; params: unknown }>();
    let lastWord = Date.now();
    let turnRunning = false;
    let stalled = false;
    // forwarded: signals recorded, each an append (beside them, the stats file's `carried`: usage updates
    // another's append recorded); handleCpuUs: this process's CPU while handling messages (for the bench).
    const counted = { messages: 0, forwarded: 0, turns: 0, handleCpuUs: 0 };
    const stallMs = Number(env.TRELLIS_CODEX_STALL_MS) > 0 ? Number(env.TRELLIS_CODEX_STALL_MS) : STALL_MS;
    const queue = (what: string, work: () => Promise<void>) => {
      chain = chain
        .then(async () => {
          const before = process.cpuUsage();
          try {
            await work();
          } finally {
            const spent = process.cpuUsage(before);
            counted.handleCpuUs += spent.user + spent.system;
          }
        })
        .catch((err: Error) => opts.log(`${what}: ${err.message}`));
    };
    const holdMs = env.TRELLIS_CODEX_USAGE_HOLD_MS !== undefined && Number(env.TRELLIS_CODEX_USAGE_HOLD_MS) >= 0 ? Number(env.TRELLIS_CODEX_USAGE_HOLD_MS) : USAGE_HOLD_MS;
    const usage = new UsageHold(holdMs, (payload) => queue('thread/tokenUsage/updated', () => forward('thread/tokenUsage/updated', payload)));
    const forward = async (event: string, payload: unknown): Promise<void> => {
      // This signal reads the usage record too: a held update is recorded with it.
      usage.carry();
      counted.forwarded++;
      const ignored = await opts.signal(event, payload ?? {}, { ...(myPane ? { fromPane: myPane } : {}), source: 'protocol' }).catch((err: unknown) => {
        if (isTrellisError(err)) return [err.message];
        throw err;
      });
      if (ignored.length) opts.log(`${event}: ${ignored.join('; ')}`);
    };
    const savePending = () => {
      const first = pending.values().next();
      if (first.done) rmSync(files.pending, { force: true });
      else writeFileSync(files.pending, JSON.stringify(first.value));
    };
    // Nothing is recorded before the launch is: the pane's signals are known from then on.
    let chain: Promise<void> = launched();
    const handle = async (method: string, params: unknown, reqId?: number | string): Promise<void> => {
      if (reqId !== undefined) {
        // Any other request (a question, an elicitation) is left to the person's TUI, which the server asks too.
        if (!APPROVAL_REQUESTS.has(method)) return opts.log(`${method}: left to the TUI`);
        pending.set(reqId, { method, params });
        savePending();
        return forward(method, params);
      }
      if (method === 'serverRequest/resolved') {
        pending.delete((params as { requestId?: number | string }).requestId ?? -1);
        savePending();
        if (pending.size === 0) await forward(method, params);
        return;
      }
      if (method === 'turn/started') turnRunning = true;
      if (method === 'turn/completed') turnRunning = false;
      if (method === 'thread/tokenUsage/updated') return usage.hold(params);
      if (method === 'turn/started' || method === 'turn/completed') await forward(method, params);
      if (method === 'turn/completed') writeFileSync(files.stats, JSON.stringify({ ...counted, carried: usage.carried, turns: ++counted.turns }));
    };
    const onMessage = (method: string, params: unknown, reqId?: number | string) => {
      lastWord = Date.now();
      stalled = false;
      counted.messages++;
      queue(method, () => handle(method, params, reqId));
    };
    const connected = await (bridged ? bridged.then((stream) => AppServerClient.over(stream, onMessage)) : connect(files.socket, onMessage, serverEnd)).catch((err: Error) => err);
    if (connected instanceof Error) return refuse(`its app-server did not come up: ${connected.message}`);
    const client: AppServerClient = connected;
    let thread: string;
    try {
      await client.request('initialize', { clientInfo: { name: 'trellis', title: 'Trellis', version: '0.1.0' } });
      client.notify('initialized');
      // What Codex's first run asks (a login, folder access) only its own TUI asks: the pane's notify path shows it.
      const asks = await askFirstRun(client, start.worktree, mainRoot(p));
      if (asks) {
        client.close();
        return refuse(`Codex's first run asks ${asks}, which only its own terminal asks`);
      }
      // No sandbox or approval policy is passed: codex's own (the person's config), and nothing written to it.
      const started = opts.resume && start.agentSessionId ? await client.request('thread/resume', { threadId: start.agentSessionId }) : await client.request('thread/start', { cwd: start.worktree });
      thread = String((started as { thread?: { id?: unknown } }).thread?.id ?? '');
      if (!thread) throw new Error('its thread has no id');
      const task = start.task.trim();
      const idle = opts.resume || !task;
      chain = chain.then(() => forward('app-server/thread', { threadId: thread, idle }));
      // The pane stopped waiting and ran the notify path: this server must start no turn of its own.
      if (existsSync(refused)) throw new Error('the pane no longer waits for it');
      if (!idle) await client.request('turn/start', { threadId: thread, input: [{ type: 'text', text: start.task }] });
    } catch (err) {
      client.close();
      return refuse(`its app-server refused: ${(err as Error).message}`);
    }
    held.control = await serveControl(files.control, (name) => decide(name));
    writeFileSync(meet?.ready ?? files.ready, thread);
    opts.log(`codex app-server: thread ${thread}`);

    function decide(choice: string): ControlReply {
      const first = pending.entries().next();
      if (first.done) return { ok: false, code: 'SESSION_REFUSED', error: `session ${id}'s Codex asks no approval now` };
      const [reqId, req] = first.value;
      const options = decisionNames(req.params);
      const want = choice.trim();
      const name = options.find((o) => o.toLowerCase() === want.toLowerCase()) ?? options.find((o) => o === ALIASES[want.toLowerCase()]);
      if (!name) return { ok: false, code: 'INVALID_INPUT', error: `Codex offers ${options.join(', ')}; '${choice}' names none of them` };
      client.respond(reqId, { decision: decisionValue(req.params, name) });
      return { ok: true, chose: name, options };
    }

    const closed = client.closed().then(() => 'closed its connection');
    // A held usage update is recorded before the watcher stops (what is already queued is recorded first).
    const settle = async () => {
      usage.release();
      await chain;
    };
    for (;;) {
      // The server's end is known at once; the session's (closed, its pane gone) within a second.
      const ended = await Promise.race([serverEnd, closed, sleep(CHECK_MS).then(() => null)]);
      if (ended !== null) {
        await settle();
        return serverEnded(ended);
      }
      if (turnRunning && pending.size === 0 && !stalled && Date.now() - lastWord > stallMs) {
        stalled = true;
        const detail = `Codex's turn has said nothing for ${Math.round((Date.now() - lastWord) / 1000)} s and has not finished; it is left as it is (not retried): interrupt it or answer in its pane`;
        chain = chain.then(() => forward('app-server/stalled', { threadId: thread, detail }));
      }
      const end = await sessionEnd();
      if (end) {
        client.close();
        await settle();
        return end;
      }
    }
  }

  /** Waits until the launch is logged (its pane known), or the session is no longer live. */
  async function launched(): Promise<void> {
    const deadline = Date.now() + UP_MS;
    for (let s = await p.sessionLog.get(id); !s.tmux && WATCHED.has(s.status) && Date.now() < deadline; s = await p.sessionLog.get(id)) await sleep(100);
  }

  async function sessionEnd(): Promise<CodexWatchEnd | null> {
    const state = await p.sessionLog.get(id);
    if (!WATCHED.has(state.status)) return 'closed';
    if (!state.tmux) return null;
    if (myPane && state.tmux.pane !== myPane) return 'replaced';
    const pane = await rt.tmux.pane(state.tmux.pane).catch(() => null);
    return !pane || pane.dead ? 'gone' : null;
  }

  /** The server ended under a live session: the agent is stopped and the session says why (never `running`). */
  async function serverEnded(why: string): Promise<CodexWatchEnd> {
    const end = await sessionEnd();
    if (end) return end;
    const state = await p.sessionLog.get(id);
    const detail = `Codex's app-server ${why}: its TUI cannot go on without it (it only draws "Reconnecting…"), so the agent was stopped; resume the session to start it again`;
    await appendCommand(p, id, { type: 'interrupt', reason: 'process-exit', detail }, id, 'protocol').catch((err: Error) => opts.log(`interrupt: ${err.message}`));
    if (state.tmux) await rt.tmux.kill(state.tmux.session).catch(() => undefined);
    opts.log(detail);
    return 'server-ended';
  }
}

/** Listens (0600) for the confined app-server's bridge: its one connection, or an error when none came within UP_MS. */
function listenForBridge(path: string, held: { bridge: Server | null }): Promise<Socket> {
  rmSync(path, { force: true });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no bridge from the sandbox within ${UP_MS / 1000} s`)), UP_MS);
    const server = createServer((stream) => {
      clearTimeout(timer);
      server.close();
      resolve(stream);
    });
    held.bridge = server;
    server.once('error', (err) => (clearTimeout(timer), reject(err)));
    server.listen(path, () => chmodSync(path, 0o600));
  });
}

/** Connects to the app-server once it listens, or fails when it ended or did not listen in time. */
async function connect(socket: string, onMessage: (method: string, params: unknown, id?: number | string) => void, serverEnd: Promise<string>): Promise<AppServerClient> {
  let gone: string | null = null;
  void serverEnd.then((why) => (gone = why));
  const deadline = Date.now() + UP_MS;
  for (;;) {
    try {
      return await AppServerClient.connect(socket, onMessage);
    } catch (err) {
      if (gone) throw new Error(`it ${gone}`);
      if (Date.now() > deadline) throw new Error(`no listener at ${socket} within ${UP_MS / 1000} s (${(err as Error).message})`);
      await sleep(100);
    }
  }
}

function codexVersion(env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve) => execFile('codex', ['--version'], { env, timeout: 10_000 }, (err, stdout) => resolve(err ? '' : stdout.trim())));
}

/** Ends the app-server and whatever it started (its own process group). */
function stop(server: ChildProcess): void {
  if (!server.pid || server.exitCode !== null || server.signalCode !== null) return;
  try {
    process.kill(-server.pid, 'SIGTERM');
  } catch {
    server.kill('SIGTERM');
  }
}
