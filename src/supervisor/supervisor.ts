import { randomUUID } from 'node:crypto';
import { TrellisError } from '../events/index.js';
import { bindError, bindPublic, isBindError } from '../http/bind.js';
import { installProcessGuards } from '../http/process-guards.js';
import { removeEndpointRecord, withRecordClaim, writeEndpointRecord, type EndpointIdentity, type EndpointRecord } from '../store/host/endpoint-record.js';
import { readEndpointRecord } from '../store/host/online-verdict.js';
import { TreeWatcher } from '../store/spec/watch-tree.js';
import { bootChild, drainChild, isBootFailure, type ChildHandle } from './child.js';
import { SwitchableProxy } from './proxy.js';
import { TestPauses } from './test-pauses.js';

export interface SupervisorOptions {
  readonly root: string;
  readonly identity: EndpointIdentity;
  readonly port: number;
  readonly host: string;
  /** TRELLIS_HOME: where the endpoint record goes. */
  readonly home: string;
  /** The child's entry module. */
  readonly entry: string;
  /** Source trees the child imports; an edit under them reloads it. */
  readonly watch: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly bootMs: number;
  readonly drainMs: number;
  readonly log: (line: string) => void;
}

/** A live, instance-validated serve of this project already holds its endpoint record (ALREADY_SERVING). */
export function alreadyServing(running: EndpointRecord): TrellisError {
  return new TrellisError(
    'ALREADY_SERVING',
    `${running.root} is already served at ${running.url} by pid ${running.pid} (instance ${running.instanceId}); ` +
      `use that one, or stop it first (kill ${running.pid}) and run 'trellis serve' again`,
  );
}

/** Settle time after a source change, so a rebuild that writes many files reloads once. */
const SOURCE_SETTLE_MS = 150;

/**
 * `trellis serve`: owns the public port as a raw TCP proxy and runs the HTTP server as a child on a
 * private port. On a source change it boots a fresh child, waits for GET /health, switches the proxy,
 * and drains the old child; an unhealthy new child is discarded and the current one keeps serving.
 */
export class Supervisor {
  readonly instanceId = randomUUID();
  private readonly proxy = new SwitchableProxy();
  private current: ChildHandle | undefined;
  private generation = 0;
  private reloading: Promise<void> | undefined;
  private again = false;
  private watchers: TreeWatcher[] = [];
  private settle: NodeJS.Timeout | undefined;
  private stopping = false;
  /** The record once written, without its `child`: every rewrite adds the child serving at that moment. */
  private published: Omit<EndpointRecord, 'child'> | undefined;
  /** Record rewrites, one after another: the last word is the latest child's, and a stop waits for it. */
  private publishing: Promise<void> = Promise.resolve();
  publicUrl = '';
  private askStop: () => void = () => {};
  /** Set by a signal, before stop() runs: no new child is booted from then on. */
  private stopRequested = false;
  private readonly pauses: TestPauses;

  constructor(private readonly opts: SupervisorOptions) {
    this.pauses = new TestPauses(opts.env.TRELLIS_TEST_PAUSE, opts.log, new Promise((resolve) => (this.askStop = resolve)));
  }

  /** A stop is on its way (a signal arrived): said at once, before any step the stop waits for ends. */
  stopAsked(): void {
    this.stopRequested = true;
    this.askStop();
  }

  /** Boots the first child, binds the public port (reaping the child if that fails), publishes the record. */
  async start(): Promise<void> {
    installProcessGuards('supervisor');
    // A second serve of one project would take the record over and, stopping, delete it: the first,
    // still running, would read offline. Refused before anything boots.
    await this.refuseIfServed();
    const first = await this.boot(this.opts.port === 0 ? undefined : this.apiUrl(this.opts.port));
    await this.pauses.at('first-boot');
    let port: number;
    try {
      port = await bindPublic(this.proxy.server, this.opts.port, this.opts.host, async () => {
        first.process.kill('SIGKILL');
        await first.exited;
      });
    } catch (err) {
      throw isBindError(err) ? err : bindError(this.opts.port, this.opts.host, undefined);
    }
    this.publicUrl = this.faceUrl(port);
    first.process.send({ type: 'api-url', url: this.publicUrl });
    this.current = first;
    this.watchDeath(first);
    this.proxy.switchTo(first.port);
    // Asked again just before the write: another serve may have come up while this one booted. A record
    // left by a serve that is gone (no answer, another instance) is not owned by anyone and is replaced.
    // The check and the write are one step among serves of this project (withRecordClaim): of two
    // started at once, the second to claim sees the first's record live.
    try {
      await withRecordClaim(this.opts.home, this.opts.root, async () => {
        await this.refuseIfServed();
        this.published = {
          version: 1,
          url: this.publicUrl,
          pid: process.pid,
          instanceId: this.instanceId,
          root: this.opts.root,
          identity: this.opts.identity,
          startedAt: new Date().toISOString(),
        };
        await writeEndpointRecord(this.opts.home, this.recordNow(), () => this.pauses.at('record-write'));
      });
    } catch (err) {
      this.stopping = true; // the child's exit below is no death to replace
      this.proxy.server.close();
      await drainChild(first, 0);
      await this.proxy.close();
      throw err;
    }
    this.watchers = this.opts.watch.map((dir) => new TreeWatcher(dir, (rel) => this.sourceChanged(rel)));
    this.opts.log(`serving ${this.opts.root} at ${this.publicUrl} (child ${first.id}, pid ${first.pid}, port ${first.port})`);
  }

  private async refuseIfServed(): Promise<void> {
    const verdict = await readEndpointRecord(this.opts.home, this.opts.root);
    if (verdict.online && verdict.record.instanceId !== this.instanceId) throw alreadyServing(verdict.record);
  }

  /** Boots a new child and switches to it; a child that does not come up healthy is discarded. */
  reload(why: string): Promise<void> {
    if (this.reloading) {
      this.again = true;
      return this.reloading;
    }
    this.reloading = (async () => {
      do {
        this.again = false;
        await this.reloadOnce(why);
      } while (this.again && !this.stopping);
    })().finally(() => (this.reloading = undefined));
    return this.reloading;
  }

  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    clearTimeout(this.settle);
    for (const w of this.watchers) w.close();
    await this.reloading;
    await this.publishing;
    // Stop accepting, without waiting: close() calls back only when every proxied connection has
    // ended, and an open SSE stream ends only when the child's drain deadline cuts it.
    this.proxy.server.close();
    if (this.current) await drainChild(this.current, this.opts.drainMs);
    await this.proxy.close();
    removeEndpointRecord(this.opts.home, this.opts.root, this.instanceId);
    this.opts.log('stopped');
  }

  private async reloadOnce(why: string): Promise<void> {
    if (this.stopping || this.stopRequested) return;
    this.opts.log(`${why}; booting child ${this.generation + 1}`);
    let next: ChildHandle;
    try {
      next = await this.boot(this.publicUrl);
    } catch (err) {
      if (!isBootFailure(err)) throw err;
      this.opts.log(`reload discarded: ${err.message}; ${this.current ? `still serving child ${this.current.id}` : 'no child is serving; retrying'}`);
      return;
    }
    await this.pauses.at('reload-booted');
    const old = this.current;
    this.current = next;
    this.proxy.switchTo(next.port);
    // The gateway goes to the new child before the old one drains: the old one then finishes only what
    // it has, and new connections stop reaching it.
    await this.publishChild();
    this.opts.log(`switched to child ${next.id} (pid ${next.pid}, port ${next.port})${old ? `; draining child ${old.id}` : ''}`);
    await this.pauses.at('switched');
    if (old) void drainChild(old, this.opts.drainMs).then(() => this.opts.log(`child ${old.id} drained and exited`));
    this.watchDeath(next);
  }

  /**
   * A serving child that dies is replaced; meanwhile the proxy holds new connections instead of sending
   * them to a dead port, and a replacement that fails to boot is retried with backoff.
   */
  private watchDeath(child: ChildHandle): void {
    void child.exited.then(async (code) => {
      if (this.current !== child || this.stopping) return;
      this.current = undefined;
      this.proxy.hold();
      // Until a replacement serves, the record names no child: its port is nobody's now.
      void this.publishChild();
      this.opts.log(`child ${child.id} exited unexpectedly with code ${code}; booting a replacement`);
      await this.pauses.at('replace');
      for (let delay = 200; !this.current && !this.stopping && !this.stopRequested; delay = Math.min(delay * 2, 10_000)) {
        await this.reload('replacing a dead child');
        // Unref'd: a stop during the backoff exits at once instead of after it.
        if (!this.current) await new Promise((r) => setTimeout(r, delay).unref());
      }
    });
  }

  /**
   * Rewrites the record naming the child serving now (or none). A failed write is logged and costs only
   * the direct hop: a gateway that finds the old child gone sends its requests to the public face.
   */
  private publishChild(): Promise<void> {
    this.publishing = this.publishing.then(async () => {
      if (!this.published || this.stopping) return;
      try {
        await writeEndpointRecord(this.opts.home, this.recordNow(), () => this.pauses.at('record-write'));
      } catch (err) {
        this.opts.log(`could not rewrite the endpoint record (${(err as Error).message}); gateways keep using ${this.publicUrl}`);
      }
    });
    return this.publishing;
  }

  /** The record as it stands: the serve's, and the child serving now if one does. */
  private recordNow(): EndpointRecord {
    return this.current ? { ...this.published!, child: this.apiUrl(this.current.port) } : this.published!;
  }

  private boot(apiUrl: string | undefined): Promise<ChildHandle> {
    return bootChild({
      entry: this.opts.entry,
      id: ++this.generation,
      bootMs: this.opts.bootMs,
      env: {
        ...this.opts.env,
        TRELLIS_PROJECT_ROOT: this.opts.root,
        TRELLIS_INSTANCE_ID: this.instanceId,
        // Never the value this process inherited: the child and its sessions reach the supervisor's face.
        TRELLIS_API_URL: apiUrl ?? '',
      },
    });
  }

  /**
   * Where the public face answers: the address it is bound to (`--host ::1` → `http://[::1]:port/`;
   * recording 127.0.0.1 there left a URL nothing answered), 127.0.0.1 for an unspecified one.
   */
  private faceUrl(port: number): string {
    const bound = this.proxy.server.address();
    const address = bound && typeof bound === 'object' ? bound.address : '127.0.0.1';
    if (address === '0.0.0.0' || address === '::') return this.apiUrl(port);
    return `http://${address.includes(':') ? `[${address}]` : address}:${port}/`;
  }

  private apiUrl(port: number): string {
    return `http://127.0.0.1:${port}/`;
  }

  private sourceChanged(rel: string): void {
    if (!/\.(m?js|json)$/.test(rel) || this.stopping) return;
    clearTimeout(this.settle);
    this.settle = setTimeout(() => void this.reload(`source changed (${rel})`), SOURCE_SETTLE_MS);
  }
}
