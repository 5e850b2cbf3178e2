import { TrellisError } from '../../events/index.js';
import type { ProjectRow } from '../../projections/project-row.js';
import type { EndpointRecord } from './endpoint-record.js';
import { readHosts, type HostEntry } from './hosts.js';
import { SshLink, type LinkState } from './ssh-link.js';

/** How often a connected host is asked for its projects (and each online one proven through its tunnel). */
const POLL_MS = 2_500;
/** How long the identity probe through a tunnel may take. */
const PROBE_MS = 2_000;

/** A host as the list shows it: its entry and where its connection stands. */
export type HostStatus = Pick<HostEntry, 'name' | 'destination'> & LinkState;

/** What a remote `trellis projects ls --json --records` row carries beyond the row. */
type RemoteRow = ProjectRow & { readonly record?: { readonly url: string; readonly instanceId: string; readonly root: string } };

interface Known {
  readonly row: ProjectRow;
  /** The tunnelled record `/p/<host>~<slot>` proxies to, while proven. */
  readonly record?: EndpointRecord;
}

/** The id of a remote project here: `~` never occurs in a slot or a host name, so it cannot collide. */
export const remoteId = (host: string, slot: string): string => `${host}~${slot}`;
export const isRemoteId = (id: string): boolean => id.includes('~');

/** One host's connection and what it last said of its projects. */
class HostProjects {
  readonly link: SshLink;
  private known = new Map<string, Known>();
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  private stopped = false;
  /** Bumped whenever the rows change. */
  version = 0;
  private listError: string | undefined;

  /** Resolves once the host has answered with its projects or could not be reached (whichever first). */
  readonly settled: Promise<void>;
  private settle: () => void = () => {};

  constructor(
    home: string,
    readonly entry: HostEntry,
    private readonly changed: () => void,
    tag?: string,
  ) {
    this.settled = new Promise((resolve) => (this.settle = resolve));
    this.link = new SshLink(home, entry, tag);
    this.link.watch(() => {
      if (this.link.state.state === 'offline') this.settle();
      if (this.link.state.state === 'online') void this.poll();
      else this.offline();
      this.changed();
    });
  }

  /** Every known row goes offline with the connection's reason; nothing is proxied until it is proven again. */
  private offline(): void {
    const s = this.link.state;
    const reason = `${this.entry.name} is unreachable: ${s.state === 'offline' ? s.reason : 'connecting'}`;
    const next = new Map<string, Known>();
    for (const [id, k] of this.known) next.set(id, { row: withoutCounts({ ...k.row, online: false, reason }) });
    this.known = next;
    this.version++;
  }

  async poll(): Promise<void> {
    if (this.polling || this.stopped) return;
    this.polling = true;
    clearTimeout(this.timer);
    try {
      if (this.link.state.state !== 'online') return;
      let listed: { projects?: RemoteRow[] };
      try {
        listed = JSON.parse(await this.link.exec(`${this.entry.trellis} projects ls --json --records`)) as { projects?: RemoteRow[] };
        this.listError = undefined;
      } catch (err) {
        this.listError = `${this.entry.name} did not list its projects: ${(err as Error).message}`;
        if (this.link.state.state === 'online') this.offlineRows(this.listError);
        return;
      }
      const next = new Map<string, Known>();
      for (const r of listed.projects ?? []) next.set(remoteId(this.entry.name, r.id), await this.prove(r));
      if (this.stopped) return;
      const before = JSON.stringify([...this.known.values()].map((k) => [k.row, k.record?.url]));
      this.known = next;
      if (JSON.stringify([...next.values()].map((k) => [k.row, k.record?.url])) !== before) {
        this.version++;
        this.changed();
      }
    } finally {
      this.settle();
      this.polling = false;
      if (!this.stopped && this.link.state.state === 'online') this.timer = setTimeout(() => void this.poll(), POLL_MS);
    }
  }

  private offlineRows(reason: string): void {
    for (const [id, k] of this.known) this.known.set(id, { row: withoutCounts({ ...k.row, online: false, reason }) });
    this.version++;
    this.changed();
  }

  /** The row as seen here: online only when the remote record's instance answers through the tunnel. */
  private async prove(r: RemoteRow): Promise<Known> {
    const { record: remote, ...rest } = r;
    const id = remoteId(this.entry.name, r.id);
    const row: ProjectRow = { ...rest, id, url: `/p/${encodeURIComponent(id)}/`, host: this.entry.name };
    if (!r.online || !remote) return { row: withoutCounts({ ...row, online: false }) };
    const why = await this.probe(remote);
    if (why) return { row: withoutCounts({ ...row, online: false, reason: why }) };
    const u = new URL(remote.url);
    const local = await this.link.forward(u.hostname.replace(/^\[|\]$/g, ''), Number(u.port));
    const record = { version: 1, url: `http://127.0.0.1:${local}`, pid: 0, instanceId: remote.instanceId, root: remote.root, identity: { toplevel: remote.root, gitCommonDir: '', worktree: false }, startedAt: '' } as const;
    return { row, record };
  }

  /** Null when the remote serve answers through its forward as the instance its record names; else why not. */
  private async probe(remote: NonNullable<RemoteRow['record']>): Promise<string | null> {
    let u: URL;
    try {
      u = new URL(remote.url);
    } catch {
      return `the record's url ${remote.url} does not parse`;
    }
    if (!/^(127\.\d+\.\d+\.\d+|\[::1\]|localhost)$/.test(u.hostname)) return `the remote record's url ${remote.url} is not loopback`;
    try {
      const local = await this.link.forward(u.hostname.replace(/^\[|\]$/g, ''), Number(u.port));
      const res = await fetch(`http://127.0.0.1:${local}/api/instance`, { signal: AbortSignal.timeout(PROBE_MS) });
      const live = (await res.json()) as { instanceId?: unknown; root?: unknown };
      if (live.instanceId !== remote.instanceId || live.root !== remote.root) return `${this.entry.name}'s backend for ${remote.root} answers as another instance`;
      return null;
    } catch (err) {
      return `${this.entry.name}'s backend does not answer through the SSH tunnel (${(err as Error).message})`;
    }
  }

  rows(): ProjectRow[] {
    return [...this.known.values()].map((k) => k.row);
  }

  record(id: string): EndpointRecord | null {
    return this.link.state.state === 'online' ? (this.known.get(id)?.record ?? null) : null;
  }

  /** Starts the remote project's backend with the remote `trellis projects serve` and waits until it is proven here. */
  async serve(id: string, slot: string): Promise<{ online: true; proxy: string }> {
    let said: string;
    try {
      said = await this.link.exec(`${this.entry.trellis} projects serve ${slot} --json`, 60_000);
    } catch (err) {
      throw new TrellisError('SERVE_FAILED', `${this.entry.name} could not start it: ${(err as Error).message}`);
    }
    const deadline = Date.now() + 15_000;
    while (!this.record(id)) {
      if (Date.now() > deadline) throw new TrellisError('SERVE_FAILED', `${this.entry.name} started it (${said.trim()}) but it does not answer through the SSH tunnel`);
      await this.poll();
      if (!this.record(id)) await new Promise((r) => setTimeout(r, 200));
    }
    return { online: true, proxy: `/p/${encodeURIComponent(id)}/` };
  }

  /** The real `trellis doctor` in the remote project's root on its host: exit code and whole transcript. */
  async doctor(id: string): Promise<{ exitCode: number; transcript: string }> {
    const root = this.known.get(id)?.row.root;
    if (root === undefined) throw new TrellisError('NOT_FOUND', `no remote project ${id}`);
    const quoted = `'${root.replace(/'/g, `'\\''`)}'`;
    try {
      const r = await this.link.transcript(`cd ${quoted} && ${this.entry.trellis} doctor`, 60_000);
      return { exitCode: r.exitCode, transcript: `$ trellis doctor   (on ${this.entry.name}, in ${root})\n${r.transcript}` };
    } catch (err) {
      throw new TrellisError('STEP_FAILED', `${this.entry.name} could not run trellis doctor: ${(err as Error).message}`);
    }
  }

  /** The backend stopped answering: ask again now. */
  forget(id: string): void {
    const k = this.known.get(id);
    if (k?.record) this.known.set(id, { row: k.row });
    void this.poll();
  }

  status(): HostStatus {
    const s = this.link.state;
    return { name: this.entry.name, destination: this.entry.destination, ...(s.state === 'online' && this.listError ? { state: 'offline', reason: this.listError } : s) };
  }

  async close(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.link.close();
  }
}

const withoutCounts = (row: ProjectRow): ProjectRow => {
  const { openIssues: _o, liveSessions: _l, inbox: _i, spend: _s, ...rest } = row;
  return rest;
};

/**
 * Every registered host of one TRELLIS_HOME, kept in step with hub.json: a host added is connected, one
 * removed (or changed) has its connection and forwards closed. Only the gateway holds one.
 */
export class RemoteProjects {
  private readonly hosts = new Map<string, HostProjects>();
  private readonly listeners = new Set<() => void>();
  private entries = '';
  private closed = false;

  /** `tag`: see SshLink (a one-shot reader's sockets are its own). */
  constructor(
    private readonly home: string,
    private readonly tag?: string,
  ) {}

  /** Waits until every host has listed its projects or shown itself unreachable, at most `ms`. */
  async settled(ms: number): Promise<void> {
    this.sync();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all([...this.hosts.values()].map((h) => h.settled)), new Promise((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
  }

  /** Calls `fn` whenever a host's state or projects change. */
  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Connects hosts added to hub.json and closes those removed or changed. */
  sync(): void {
    if (this.closed) return;
    const list = readHosts(this.home);
    const print = JSON.stringify(list);
    if (print === this.entries) return;
    this.entries = print;
    const want = new Map(list.map((e) => [e.name, e]));
    for (const [name, h] of this.hosts) {
      if (JSON.stringify(want.get(name)) !== JSON.stringify(h.entry)) {
        this.hosts.delete(name);
        void h.close();
      }
    }
    for (const e of list) if (!this.hosts.has(e.name)) this.hosts.set(e.name, new HostProjects(this.home, e, () => this.fire(), this.tag));
    this.fire();
  }

  private fire(): void {
    for (const fn of [...this.listeners]) fn();
  }

  rows(): ProjectRow[] {
    this.sync();
    return [...this.hosts.values()].flatMap((h) => h.rows());
  }

  statuses(): HostStatus[] {
    this.sync();
    return [...this.hosts.values()].map((h) => h.status());
  }

  /** The tunnelled record of remote project `id` while its host is connected and its backend proven, else null. */
  record(id: string): EndpointRecord | null {
    this.sync();
    return this.hosts.get(id.slice(0, id.indexOf('~')))?.record(id) ?? null;
  }

  /** Starts remote project `id`'s backend on its host (a detached serve there, through ssh). */
  serve(id: string): Promise<{ online: true; proxy: string }> {
    this.sync();
    const at = id.indexOf('~');
    const slot = id.slice(at + 1);
    const h = this.hosts.get(id.slice(0, at));
    // The slot goes into a remote shell line: only a slot's own characters pass.
    if (!h || !/^[a-z0-9._-]+$/.test(slot)) throw new TrellisError('NOT_FOUND', `no remote project ${id}`);
    return h.serve(id, slot);
  }

  /** `trellis doctor` in remote project `id` on its host. */
  doctor(id: string): Promise<{ exitCode: number; transcript: string }> {
    this.sync();
    const h = this.hosts.get(id.slice(0, id.indexOf('~')));
    if (!h) throw new TrellisError('NOT_FOUND', `no remote project ${id}`);
    return h.doctor(id);
  }

  forget(id: string): void {
    this.hosts.get(id.slice(0, id.indexOf('~')))?.forget(id);
  }

  /** Changes whenever any host's state or rows change. */
  fingerprint(): string {
    this.sync();
    return [...this.hosts.values()].map((h) => `${h.entry.name}:${h.link.version}:${h.version}`).join(',');
  }

  /** A host's connection, for operations run on it. */
  link(name: string): SshLink | undefined {
    this.sync();
    return this.hosts.get(name)?.link;
  }

  async close(): Promise<void> {
    const all = [...this.hosts.values()];
    this.hosts.clear();
    this.closed = true;
    await Promise.all(all.map((h) => h.close()));
  }
}
