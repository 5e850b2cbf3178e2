import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import type { HostEntry } from './hosts.js';

/** Where a host stands, as its ssh last said. */
export type LinkState =
  | { readonly state: 'connecting' }
  | { readonly state: 'online' }
  | { readonly state: 'offline'; readonly reason: string; readonly repair?: string };

/** Backoff between reconnects: doubles from the first, never longer than the last. */
const BACKOFF_MS = [500, 1_000, 2_000, 4_000, 5_000] as const;
/** How often the master is asked whether it still has its connection (a dead peer is seen within it). */
const ALIVE_S = 2;
/** How long one command through the connection may take before it is given up. */
const EXEC_MS = 15_000;

/** The control sockets' folder: `$TRELLIS_HOME/ssh`, 0700, so nobody else on this machine can use a connection. */
export function controlDir(home: string): string {
  const dir = join(home, 'ssh');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  return dir;
}

/**
 * The one SSH connection to a host (issue 31): the user's own `ssh` as a ControlMaster, never interactive,
 * never accepting an unknown or changed host key. Every command and forward rides it. When it ends the
 * host is offline with ssh's own last words, and it is made again after a bounded backoff.
 */
export class SshLink {
  readonly socket: string;
  private master: ChildProcess | undefined;
  private status: LinkState = { state: 'connecting' };
  private attempt = 0;
  private retry: NodeJS.Timeout | undefined;
  private closed = false;
  /** Remote `host:port` → the loopback port here that ssh forwards to it. */
  private readonly forwards = new Map<string, number>();
  /** Bumped on every change of state: the list's fingerprint includes it. */
  version = 0;
  private readonly watchers = new Set<() => void>();

  /** `tag`: a one-shot user (the CLI) names a socket of its own, never touching the gateway's. */
  constructor(
    home: string,
    readonly entry: HostEntry,
    tag?: string,
  ) {
    this.socket = join(controlDir(home), `${entry.name}${tag ? `.${tag}` : ''}.sock`);
    this.connect();
  }

  get state(): LinkState {
    return this.status;
  }

  /** Calls `fn` on every change of state; returns the unsubscribe. */
  watch(fn: () => void): () => void {
    this.watchers.add(fn);
    return () => this.watchers.delete(fn);
  }

  private set(s: LinkState): void {
    this.status = s;
    this.version++;
    for (const fn of [...this.watchers]) fn();
  }

  /** Options every ssh run for this host carries: the user's config (or the host's), no prompts, known keys only. */
  private common(): string[] {
    return [...(this.entry.sshConfig ? ['-F', this.entry.sshConfig] : []), '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=yes', '-S', this.socket];
  }

  /** The command a person runs once by hand to check and accept the host's key. */
  private byHand(): string {
    return `ssh ${this.entry.sshConfig ? `-F ${this.entry.sshConfig} ` : ''}${this.entry.destination} true`;
  }

  private connect(): void {
    if (this.closed) return;
    rmSync(this.socket, { force: true });
    const args = [...this.common(), '-M', '-N', '-o', 'ControlPersist=no', '-o', 'ConnectTimeout=5', '-o', `ServerAliveInterval=${ALIVE_S}`, '-o', 'ServerAliveCountMax=2', '-o', 'ExitOnForwardFailure=yes', '--', this.entry.destination];
    const child = spawn('ssh', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    this.master = child;
    let said = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (said = (said + d).slice(-2_000)));
    // The control socket appears once ssh has authenticated: until then the host is connecting.
    const ready = setInterval(() => {
      if (this.master === child && existsSync(this.socket)) {
        clearInterval(ready);
        this.attempt = 0;
        this.set({ state: 'online' });
      }
    }, 50);
    const ended = (why: string) => {
      clearInterval(ready);
      if (this.master !== child) return;
      this.master = undefined;
      this.forwards.clear();
      if (this.closed) return;
      const reason = said.trim().split('\n').filter(Boolean).pop() ?? why;
      const keyProblem = /host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED|No .* host key is known/i.test(said);
      this.set({ state: 'offline', reason, ...(keyProblem ? { repair: `the host's key is not known or has changed; check it and accept it once by hand: ${this.byHand()}` } : {}) });
      const wait = BACKOFF_MS[Math.min(this.attempt++, BACKOFF_MS.length - 1)]!;
      this.retry = setTimeout(() => this.connect(), wait);
    };
    child.on('error', (err) => ended(`ssh could not run (${err.message})`));
    child.on('exit', (code, signal) => ended(`the connection to ${this.entry.destination} ended (ssh ${signal ?? `exited ${code}`})`));
  }

  /** Runs `command` over the connection to its end: its exit code and its stdout and stderr interleaved, whole. */
  transcript(command: string, timeoutMs = EXEC_MS): Promise<{ exitCode: number; transcript: string }> {
    return new Promise((resolve, reject) => {
      if (this.status.state !== 'online') return reject(new Error(this.status.state === 'offline' ? this.status.reason : 'connecting'));
      const child = spawn('ssh', [...this.common(), '-o', 'ControlMaster=no', '--', this.entry.destination, command], { stdio: ['ignore', 'pipe', 'pipe'] });
      const chunks: Buffer[] = [];
      child.stdout!.on('data', (d: Buffer) => chunks.push(d));
      child.stderr!.on('data', (d: Buffer) => chunks.push(d));
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.on('error', (e) => (clearTimeout(timer), reject(e)));
      child.on('close', (code, signal) => (clearTimeout(timer), resolve({ exitCode: code ?? (signal ? 128 : 1), transcript: Buffer.concat(chunks).toString() })));
    });
  }

  /** Runs `command` (a remote shell line) over the connection: its stdout, or an error with ssh's or the command's words. */
  exec(command: string, timeoutMs = EXEC_MS): Promise<string> {
    return new Promise((resolve, reject) => {
      if (this.status.state !== 'online') return reject(new Error(this.status.state === 'offline' ? this.status.reason : 'connecting'));
      const child = spawn('ssh', [...this.common(), '-o', 'ControlMaster=no', '--', this.entry.destination, command], { stdio: ['ignore', 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      let err = '';
      child.stdout!.on('data', (d: Buffer) => out.push(d));
      child.stderr!.setEncoding('utf8').on('data', (d: string) => (err = (err + d).slice(-4_000)));
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.on('error', (e) => (clearTimeout(timer), reject(e)));
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        if (code === 0) resolve(Buffer.concat(out).toString());
        else reject(new Error(err.trim().split('\n').pop() || `the command on ${this.entry.name} ended with ${signal ?? `exit ${code}`}`));
      });
    });
  }

  /**
   * A loopback port here that ssh forwards to `host:port` on the remote machine (asked once per remote
   * address while the connection lasts): the only way the gateway reaches that machine's services.
   */
  async forward(host: string, port: number): Promise<number> {
    const key = `${host}:${port}`;
    const known = this.forwards.get(key);
    if (known !== undefined) return known;
    const bracket = host.includes(':') ? `[${host}]` : host;
    for (let tries = 0; ; tries++) {
      const local = await freePort();
      try {
        await this.control(['-O', 'forward', '-L', `127.0.0.1:${local}:${bracket}:${port}`]);
        this.forwards.set(key, local);
        return local;
      } catch (err) {
        // Another process took the port between our look and ssh's bind: try another.
        if (tries >= 3) throw err;
      }
    }
  }

  /** Drops a forward (its remote service moved or stopped). */
  async unforward(host: string, port: number): Promise<void> {
    const local = this.forwards.get(`${host}:${port}`);
    if (local === undefined) return;
    this.forwards.delete(`${host}:${port}`);
    const bracket = host.includes(':') ? `[${host}]` : host;
    await this.control(['-O', 'cancel', '-L', `127.0.0.1:${local}:${bracket}:${port}`]).catch(() => {});
  }

  private control(args: string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn('ssh', [...this.common(), ...args, '--', this.entry.destination], { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(err.trim() || `ssh ${args.join(' ')} failed`))));
    });
  }

  /** Ends the connection and its forwards for good. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const master = this.master;
    if (master && master.exitCode === null && master.signalCode === null) {
      const gone = new Promise((r) => master.once('exit', r));
      master.kill('SIGTERM');
      await gone;
    }
    this.forwards.clear();
    rmSync(this.socket, { force: true });
    this.watchers.clear();
  }
}

/** A loopback port free at this moment. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}
