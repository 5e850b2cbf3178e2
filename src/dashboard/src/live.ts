import { signal } from '@preact/signals';
import { apiUrl } from './api';

/** What the page tells the user about its live connection. */
export type LinkState = 'connecting' | 'live' | 'reconnecting';

export const BACKOFF_FIRST_MS = 250;
export const BACKOFF_MAX_MS = 8_000;

/**
 * One server-sent event stream that never gives up: a drop (a backend reload, a network blip, a proxy
 * answering 502 for a moment) closes it and opens a new one after a bounded exponential backoff (250 ms
 * doubling to 8 s, with jitter), visible through `state`. The browser's own EventSource retry is not used:
 * it stops for good on a non-200 answer, which is what a reloading backend may give.
 */
export class LiveStream {
  readonly state = signal<LinkState>('connecting');
  private es: EventSource | null = null;
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;

  constructor(
    private readonly path: string,
    private readonly handlers: Record<string, (data: string) => void>,
    /** The event after which the stream counts as live again (and the backoff resets). */
    private readonly readyEvent = 'ready',
    /**
     * Called when the stream drops or is refused. An EventSource cannot read a refusal, so the owner asks
     * a plain GET what went wrong (a malformed trellis.json, a login that ended) and shows it.
     */
    private readonly onDrop?: () => void,
  ) {}

  start(): this {
    this.open();
    return this;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.es?.close();
  }

  private open(): void {
    if (this.stopped) return;
    const es = new EventSource(apiUrl(this.path));
    this.es = es;
    for (const [name, fn] of Object.entries(this.handlers)) {
      es.addEventListener(name, (e) => {
        if (name === this.readyEvent) {
          this.attempt = 0;
          this.state.value = 'live';
        }
        fn((e as MessageEvent<string>).data);
      });
    }
    es.onerror = () => {
      es.close();
      if (this.stopped || this.es !== es) return;
      this.state.value = 'reconnecting';
      this.onDrop?.();
      const wait = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** this.attempt++);
      this.timer = setTimeout(() => this.open(), wait / 2 + (Math.random() * wait) / 2);
    };
  }
}
