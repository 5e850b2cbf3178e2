import http from 'node:http';
import type { ProjectList } from '../store/host/project-list.js';
import type { OnlineVerdicts } from '../store/host/online-verdict.js';
import { listFingerprint } from '../store/host/project-list.js';
import type { RemoteProjects } from '../store/host/remote-projects.js';

/** How often the feed looks for a change while anyone listens (a stat per record and config: cheap). */
const TICK_MS = 200;

/**
 * One poller behind every open `/projects/stream`: it ticks only while someone listens, recomputes the
 * list only when the cheap fingerprint of its inputs changed, and hands each distinct body to every
 * listener. However many dashboards are open, the list is probed once per change.
 *
 * What happens inside a running project (an issue opened, a session starting to wait) moves no file the
 * fingerprint covers, so the feed also listens to each online project's own change stream
 * (`/api/graph/stream`, one connection per project while anyone listens): every change it announces
 * recomputes the list, which carries the project's counts and its inbox.
 */
export class ProjectFeed {
  private readonly listeners = new Set<(body: string) => void>();
  private timer: NodeJS.Timeout | undefined;
  private print = '';
  private body = '';
  private busy = false;
  private again = false;
  /** Project id → its backend's change stream, while the project is online and anyone listens. */
  private readonly upstreams = new Map<string, { req: http.ClientRequest | null }>();

  constructor(
    /** The gateway's online verdicts: a project's change stream is opened at its proven record. */
    private readonly verdicts: OnlineVerdicts,
    private readonly compute: () => Promise<ProjectList>,
    /** Other hosts' projects: their changes recompute the list too. */
    private readonly remote?: RemoteProjects,
  ) {
    remote?.onChange(() => this.listeners.size && this.poke());
  }

  /** Calls `fn` with the current list (at once when known, else as soon as it is), then on every change; returns the unsubscribe. */
  subscribe(fn: (body: string) => void): () => void {
    this.listeners.add(fn);
    if (this.listeners.size === 1) {
      // Nobody watched meanwhile: what was known is stale.
      this.print = '';
      this.body = '';
      this.timer = setInterval(() => void this.tick(), TICK_MS);
      void this.tick();
    } else if (this.body) fn(this.body);
    return () => {
      if (this.listeners.delete(fn) && this.listeners.size === 0) {
        clearInterval(this.timer);
        for (const u of this.upstreams.values()) u.req?.destroy();
        this.upstreams.clear();
      }
    };
  }

  /** Something changed inside a project: recompute now, whatever the fingerprint says. */
  private poke(): void {
    this.print = '';
    void this.tick();
  }

  private async tick(): Promise<void> {
    if (this.busy) {
      this.again = true;
      return;
    }
    this.busy = true;
    try {
      const print = `${listFingerprint(this.verdicts.home)}|${this.remote?.fingerprint() ?? ''}`;
      if (print === this.print) return;
      this.print = print;
      const list = await this.compute();
      if (this.listeners.size) this.follow(list);
      const body = JSON.stringify(list);
      if (body !== this.body) {
        this.body = body;
        for (const fn of [...this.listeners]) fn(body);
      }
    } catch (err) {
      // Tried again on the next tick; meanwhile the log says why.
      this.print = '';
      console.error(`trellis gateway: the project list could not be computed: ${(err as Error).message}`);
    } finally {
      this.busy = false;
      if (this.again) {
        this.again = false;
        this.print = '';
        void this.tick();
      }
    }
  }

  /** Opens a change stream to each online project not yet followed; drops those gone offline. */
  private follow(list: ProjectList): void {
    const online = new Set(list.projects.filter((p) => p.online).map((p) => p.id));
    for (const [id, u] of this.upstreams) {
      if (!online.has(id)) {
        u.req?.destroy();
        this.upstreams.delete(id);
      }
    }
    for (const id of online) if (!this.upstreams.has(id)) void this.listen(id);
  }

  private async listen(id: string): Promise<void> {
    const slot: { req: http.ClientRequest | null } = { req: null };
    this.upstreams.set(id, slot);
    const record = await this.verdicts.onlineRecord(id);
    if (!record || this.upstreams.get(id) !== slot) {
      if (this.upstreams.get(id) === slot) this.upstreams.delete(id);
      return;
    }
    // Forgotten when it ends: the next recompute that finds the project online opens a new one.
    const gone = () => {
      if (this.upstreams.get(id) !== slot) return;
      this.upstreams.delete(id);
      this.poke();
    };
    const req = http.get(new URL('/api/graph/stream', record.url), { headers: { Accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return;
      }
      res.setEncoding('utf8');
      let carry = '';
      res.on('data', (chunk: string) => {
        const text = carry + chunk;
        carry = text.slice(text.lastIndexOf('\n') + 1);
        if (/^event: graph$/m.test(text.slice(0, text.length - carry.length))) this.poke();
      });
      res.on('close', gone);
    });
    req.on('error', gone);
    slot.req = req;
  }
}
