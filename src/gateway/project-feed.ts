import type { ProjectList } from '../store/host/project-list.js';
import { listFingerprint } from '../store/host/project-list.js';

/** How often the feed looks for a change while anyone listens (a stat per record and config: cheap). */
const TICK_MS = 200;

/**
 * One poller behind every open `/projects/stream`: it ticks only while someone listens, recomputes the
 * list only when the cheap fingerprint of its inputs changed, and hands each distinct body to every
 * listener. However many dashboards are open, the list is probed once per change.
 */
export class ProjectFeed {
  private readonly listeners = new Set<(body: string) => void>();
  private timer: NodeJS.Timeout | undefined;
  private print = '';
  private body = '';
  private busy = false;

  constructor(
    private readonly home: string,
    private readonly compute: () => Promise<ProjectList>,
  ) {}

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
      if (this.listeners.delete(fn) && this.listeners.size === 0) clearInterval(this.timer);
    };
  }

  private async tick(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const print = listFingerprint(this.home);
      if (print === this.print) return;
      this.print = print;
      const body = JSON.stringify(await this.compute());
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
    }
  }
}
