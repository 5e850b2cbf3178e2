/**
 * The two ends of a confined agent's way out (issue 45), run by node as a program of its own beside the
 * sandbox, never loaded by the CLI. A confined session has a network namespace of its own (bubblewrap's
 * --unshare-net): nothing on the host's loopback — the Trellis serves, the gateway, other sessions'
 * servers — and nothing beyond it is reachable from inside, except through these two relays, which meet
 * on Unix sockets in one folder bind-mounted into the sandbox.
 *
 *   outer <dir> <session> <trellis-bin> <allow-json> <sync-json> <expose-json> -- <sandbox argv>   the
 *       pane's process, outside the sandbox, as the person; it starts the sandbox at once (its sockets are
 *       bound as listen() returns) and ends with it: `net.sock` takes a connection that names its target on
 *       its first line and joins it only when the target is on the allow-list (`host:port`); `proxy` on
 *       that line is an HTTP proxy whose CONNECT (or absolute URL) target is checked the same way.
 *       `signal.sock` takes one hook signal (`{event, payload}`) and records it as `trellis session signal
 *       <session> <event>` would, in this process (the CLI's src/cli/relayed-signal.js, loaded while the
 *       sandbox starts): the session's only write, for its own id whatever the caller names. `<session>`
 *       takes the same over HTTP (`POST /signal/<id>/<event>`) from the hooks' shell program and curl
 *       (agents/hook-program.ts), answering what the hook says and how it exits. Each port of
 *       `expose` (an agent's own server Trellis drives: opencode's) is listened on at the person's
 *       loopback and joined to `in/<port>.sock` once its peer said the launch's greeting (confine-relay-expose.ts).
 *   inner <dir> <ports-json> <expose-json>   inside: listens on 127.0.0.1 at each allowed loopback port (a
 *       model provider on loopback keeps its URL) and at PROXY_PORT (HTTPS_PROXY), each joined to
 *       `net.sock`; and on `in/<port>.sock` for each exposed port, joined to that port inside.
 */
import { spawn } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import { readdirSync, readFileSync, renameSync, rmSync, statSync, watch, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect, createServer, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { exposeInside, exposeOutside, join2 } from './confine-relay-expose.js';
import { hookSignalListener } from '../agents/hook-http.js';

/** The proxy's port inside the sandbox's own network namespace (nothing else listens there). */
export const PROXY_PORT = 3128;

/** Reads up to the first `\n` (or the end of an HTTP head, for the proxy), then hands the rest on. */
function firstLine(sock: Socket, until: string, done: (head: string, rest: Buffer) => void): void {
  let buf = Buffer.alloc(0);
  const onData = (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk]);
    const at = buf.indexOf(until);
    if (at < 0) {
      if (buf.length > 16_384) sock.destroy();
      return;
    }
    sock.off('data', onData);
    sock.pause();
    done(buf.subarray(0, at).toString('latin1'), buf.subarray(at + until.length));
  };
  sock.on('data', onData);
  sock.on('error', () => sock.destroy());
}

/** Whether `host:port` is on the allow-list (names compared without case, a bare name meaning :443). */
export function allowed(allow: readonly string[], host: string, port: number): boolean {
  const want = `${host.replace(/^\[|\]$/g, '').toLowerCase()}:${port}`;
  return allow.some((a) => (a.includes(':') && !a.startsWith('[') ? a.toLowerCase() : `${a.toLowerCase()}:443`) === want);
}

/** `host:port` split; null when it is not one. */
function target(s: string): { host: string; port: number } | null {
  const m = /^\[?([^\]\s]+?)\]?:(\d{1,5})$/.exec(s.trim());
  return m ? { host: m[1]!, port: Number(m[2]) } : null;
}


/**
 * Copies each `[copy, real]` back to the real file whenever the agent changed its copy in its private
 * home (written whole, by a temporary file renamed over the real one, as the agent writes its own).
 */
function syncBack(pairs: readonly [string, string][]): () => void {
  const last = new Map<string, string>();
  const copy = () => {
    for (const [from, to] of pairs) {
      try {
        const text = readFileSync(from, 'utf8');
        if (last.get(from) === text) continue;
        last.set(from, text);
        if (readFileSync(to, 'utf8') === text) continue;
        // Never a half-written file: the agent's own writes are whole, and so is this one.
        JSON.parse(text);
        const tmp = `${to}.trellis-${process.pid}`;
        writeFileSync(tmp, text, { mode: statSync(to).mode });
        renameSync(tmp, to);
      } catch {
        // Mid-write, or not JSON yet: the next change copies it.
      }
    }
  };
  for (const [from] of pairs) last.set(from, readFileSync(from, 'utf8'));
  const dirs = [...new Set(pairs.map(([from]) => dirname(from)))];
  const watchers = dirs.map((d) => watch(d, () => copy()));
  return () => {
    for (const w of watchers) w.close();
    copy();
  };
}

function outer(dir: string, session: string, trellisBin: string, allow: readonly string[], sync: readonly [string, string][], expose: readonly number[], sandbox: readonly string[]): void {
  const synced = syncBack(sync);
  const refuse = (sock: Socket, why: string) => sock.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\ntrellis: ${why}\n`);
  const net = createServer((sock) => {
    firstLine(sock, '\n', (line, rest) => {
      if (line !== 'proxy') {
        const t = target(line);
        if (!t || !allowed(allow, t.host, t.port)) return void sock.destroy();
        return join2(sock, connect(t.port, t.host), rest);
      }
      // An HTTP proxy request: its head, then whatever followed it. What came with the first line is
      // its start (the inner relay writes the agent's bytes right behind it: one read may hold both).
      if (rest.length) sock.unshift(rest);
      firstLine(sock, '\r\n\r\n', (head, body) => {
        const [method, uri] = head.split('\r\n')[0]!.split(' ');
        let t: { host: string; port: number } | null = null;
        if (method === 'CONNECT') t = target(uri ?? '');
        else {
          try {
            const u = new URL(uri ?? '');
            t = { host: u.hostname, port: Number(u.port) || (u.protocol === 'https:' ? 443 : 80) };
          } catch {}
        }
        if (!t) return refuse(sock, 'not a proxy request');
        if (!allowed(allow, t.host, t.port)) return refuse(sock, `${t.host}:${t.port} is not on this session's network allow-list ("sessions": { "network": [...] } in trellis.json widens it)`);
        const up = connect(t.port, t.host);
        up.on('error', () => refuse(sock, `cannot reach ${t.host}:${t.port}`));
        if (method === 'CONNECT') up.once('connect', () => (sock.write('HTTP/1.1 200 Connection established\r\n\r\n'), join2(sock, up, body)));
        else join2(sock, up, Buffer.concat([Buffer.from(`${head}\r\n\r\n`, 'latin1'), body]));
      });
      sock.resume();
    });
  });
  // The hook's signal is recorded in this process, by the CLI's own function loaded now, while the sandbox
  // and the agent start (a whole CLI's start-up per hook, after the agent's, was the confined hook's cost);
  // a CLI process per signal if it cannot load. One at a time, in the order they came.
  const recorder = loadRecorder(trellisBin);
  let queue: Promise<unknown> = Promise.resolve();
  let inFlight = 0;
  const record = (event: string, payload: string, say?: (line: string) => void): Promise<number> => {
    inFlight++;
    const done = queue.then(async () => {
      const r = await recorder;
      return r ? r(process.cwd(), session, event, payload, say) : signalProcess(trellisBin, session, event, payload);
    }).catch(() => 1);
    queue = done.finally(() => inFlight--);
    return done;
  };
  const signal = createServer((sock) => {
    const parts: Buffer[] = [];
    sock.on('data', (c: Buffer) => parts.push(c));
    sock.on('error', () => {});
    sock.on('end', () => {
      let msg: { event?: unknown; payload?: unknown };
      try {
        msg = JSON.parse(Buffer.concat(parts).toString('utf8')) as typeof msg;
      } catch {
        return void sock.end('1\n');
      }
      if (typeof msg.event !== 'string' || !/^[\w.-]{1,64}$/.test(msg.event)) return void sock.end('1\n');
      void record(msg.event, typeof msg.payload === 'string' ? msg.payload : '').then((code) => sock.end(`${code}\n`));
    });
  });
  // The hooks' shell program (confine-agents.ts relaySignalHook) POSTs here, `<dir>/<session>`, with curl: HTTP
  // as a session's recorder speaks it (src/cli/hook-recorder.ts): 200 recorded or ignored, 422 refused, the
  // body what the hook says on stderr. For this session only, whatever the request names.
  // node:http loaded here, by the relay's own process only (the CLI imports this file for its constants).
  const http = createRequire(import.meta.url)('node:http') as typeof import('node:http');
  const hooks = http.createServer(hookSignalListener(`session ${session}'s relay`, ({ event, text }, say) => record(event, text.trim(), say)));
  let status = 0;
  const bye = () => {
    synced();
    // The agent's last signals (its SessionEnd as it leaves) are recorded before this ends.
    if (inFlight > 0) return void setTimeout(bye, 50);
    rmSync(dir, { recursive: true, force: true });
    process.exit(status);
  };
  // This is the pane's first process, so the terminal's hangup (its tmux session killed) comes here: it
  // goes on to the agent, whose pane it was, while bubblewrap and the relays ignore it (`trap` below and
  // inner) so that the sandbox outlives it until the agent has left and its last hooks went out.
  let echo = false;
  const forward = (sig: NodeJS.Signals) => () => {
    if (echo) return void (echo = false);
    echo = true;
    try {
      process.kill(-process.pid, sig);
    } catch {
      echo = false;
    }
  };
  process.on('SIGHUP', forward('SIGHUP')).on('SIGTERM', forward('SIGTERM')).on('SIGINT', () => {});
  const start = () => {
    const child = spawn('/bin/sh', ['-c', `trap '' HUP TERM; exec "$@"`, 'trellis-sandbox', ...sandbox], { stdio: 'inherit' });
    child.on('exit', (code, sig) => {
      status = code ?? 128 + (sig ? (osConstants.signals[sig] ?? 1) : 1);
      bye();
    });
  };
  // A Unix socket is bound as listen() returns: the sandbox starts at once, and finds both.
  net.listen(join(dir, 'net.sock'));
  signal.listen(join(dir, 'signal.sock'));
  hooks.listen(join(dir, session));
  // Each server of the agent's that Trellis drives (opencode's), at the same port on the person's loopback.
  exposeOutside(dir, expose);
  start();
}

/** The CLI's in-process recorder of a relayed signal (src/cli/relayed-signal.ts, beside the bin), or null. */
type Recorder = (cwd: string, session: string, event: string, payload: string, say?: (line: string) => void) => Promise<number>;
function loadRecorder(trellisBin: string): Promise<Recorder | null> {
  return import(pathToFileURL(join(dirname(trellisBin), 'relayed-signal.js')).href).then(
    (m: { recordRelayedSignal?: Recorder; warmRelayedSignal?: () => void }) => {
      // What the first turn's signal needs (the price table), loaded now while the agent starts.
      m.warmRelayedSignal?.();
      return m.recordRelayedSignal ?? null;
    },
    () => null,
  );
}

/** `trellis session signal <session> <event>` as a process of its own, the payload on its stdin: its exit status. */
function signalProcess(trellisBin: string, session: string, event: string, payload: string): Promise<number> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [trellisBin, 'session', 'signal', session, event], { stdio: ['pipe', 'ignore', 'inherit'] });
    child.stdin.end(payload);
    child.on('exit', (code) => done(code ?? 1));
    child.on('error', () => done(1));
  });
}

function inner(dir: string, ports: readonly number[], expose: readonly number[], command: readonly string[]): void {
  // The agent's own servers, reached from outside: the outer relay joins each connection to `in/<port>.sock`.
  exposeInside(dir, expose);
  // The pane's hangup (its tmux session killed) is the agent's to handle, as unconfined: it was ignored
  // from the pane's shell on, so the sandbox outlives it while the agent's last hooks go out; the agent
  // itself is started with every signal at its default (libuv resets them in the child).
  process.on('SIGINT', () => {}).on('SIGHUP', () => {}).on('SIGTERM', () => {}).on('SIGQUIT', () => {});
  const via = (first: string) => (sock: Socket) => {
    sock.pause();
    const out = connect(join(dir, 'net.sock'));
    out.on('error', () => sock.destroy());
    out.once('connect', () => {
      out.write(`${first}\n`);
      join2(sock, out, Buffer.alloc(0));
    });
  };
  const all = [...ports.map((p) => [p, `127.0.0.1:${p}`] as const), [PROXY_PORT, 'proxy'] as const];
  let up = 0;
  for (const [port, first] of all) {
    createServer(via(first)).listen(port, '127.0.0.1', () => {
      if (++up < all.length) return;
      // Listening: the agent starts, and this relay ends with it.
      const child = spawn(command[0]!, command.slice(1), { stdio: 'inherit' });
      child.on('exit', (code, signal) => {
        const status = code ?? 128 + (signal ? (osConstants.signals[signal] ?? 1) : 1);
        // The sandbox's processes die with it (its own pid namespace): an agent leaving starts its last
        // hook (claude's SessionEnd) and exits, so the hook's signal goes out before this ends (10 s at most).
        const until = Date.now() + 10_000;
        const end = () => (hooksRunning() && Date.now() < until ? setTimeout(end, 25) : process.exit(status));
        end();
      });
      child.on('error', (e) => {
        process.stderr.write(`trellis: cannot start ${command[0]}: ${e.message}\n`);
        process.exit(127);
      });
    }).on('error', (e) => {
      process.stderr.write(`trellis: the sandbox's network relay cannot listen on 127.0.0.1:${port}: ${e.message}\n`);
      process.exit(1);
    });
  }
}

/** Whether a hook's `trellis session signal` still runs in this sandbox (its /proc shows only its own processes). */
function hooksRunning(): boolean {
  return readdirSync('/proc').some((d) => {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) return false;
    try {
      return readFileSync(`/proc/${d}/cmdline`, 'utf8').includes('\0session\0signal\0');
    } catch {
      return false;
    }
  });
}

/** `trellis session signal`'s way out of a sandbox: the hook's event and payload, to the outer relay. */
export function relaySignal(socket: string, event: string, payload: string): Promise<number> {
  return new Promise((done) => {
    const sock = connect(socket);
    let said = '';
    sock.on('data', (c: Buffer) => (said += c.toString('utf8')));
    sock.on('error', (e) => {
      process.stderr.write(`trellis: cannot reach Trellis from this sandbox (${socket}): ${e.message}\n`);
      done(1);
    });
    sock.on('close', () => done(Number(said.trim()) || 0));
    sock.end(JSON.stringify({ event, payload }));
  });
}

const [, , mode, ...args] = process.argv;
if (process.argv[1]?.endsWith('confine-relay.js') && mode === 'outer') outer(args[0]!, args[1]!, args[2]!, JSON.parse(args[3]!) as string[], JSON.parse(args[4]!) as [string, string][], JSON.parse(args[5]!) as number[], args.slice(7));
// A confined agent's hook (`<relay> session signal <id> <event>`, the payload on stdin): the relay's light
// stand-in for `trellis session signal`, so a hook inside starts no whole CLI; the id is the relay's own.
if (process.argv[1]?.endsWith('confine-relay.js') && mode === 'session' && args[0] === 'signal') {
  const socket = process.env.TRELLIS_SIGNAL_RELAY;
  if (!socket) process.stderr.write('trellis: this hook runs only inside a confined session (TRELLIS_SIGNAL_RELAY is not set)\n');
  else {
    const parts: Buffer[] = [];
    process.stdin.on('data', (c: Buffer) => parts.push(c)).on('error', () => {});
    process.stdin.on('end', () => void relaySignal(socket, args[2] ?? '', Buffer.concat(parts).toString('utf8').trim()).then(() => process.exit(0)));
  }
}
// A confined Codex's app-server to its watcher outside (`<relay> bridge <server socket> <watcher socket>`):
// one connection, joined both ways, once the server listens (20 s at most).
if (process.argv[1]?.endsWith('confine-relay.js') && mode === 'bridge') bridge(args[0]!, args[1]!, Date.now() + 20_000);
function bridge(server: string, watcher: string, until: number): void {
  const a = connect(server);
  a.once('error', () => (Date.now() < until ? setTimeout(() => bridge(server, watcher, until), 100) : process.exit(1)));
  a.once('connect', () => {
    const b = connect(watcher);
    b.on('error', () => a.destroy());
    a.on('error', () => b.destroy());
    a.pipe(b).on('close', () => process.exit(0));
    b.pipe(a);
    a.on('close', () => b.destroy());
    b.on('close', () => (a.destroy(), process.exit(0)));
  });
}
if (process.argv[1]?.endsWith('confine-relay.js') && mode === 'inner') inner(args[0]!, JSON.parse(args[1]!) as number[], JSON.parse(args[2]!) as number[], args.slice(4));
