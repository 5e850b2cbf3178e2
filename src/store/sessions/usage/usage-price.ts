import { createRequire } from 'node:module';
import type { UsageEntry } from '../../../events/index.js';
import type { RawEntry } from './usage-read.js';

/**
 * Prices responses with a maintained price table, `@pydantic/genai-prices` (Pydantic's, updated with each
 * provider's price changes, with cache read and write rates and prices that change by date): each at the
 * time the agent recorded it, kept with the figure, so a later price change never rewrites what a session
 * cost. A model the table lacks stays unpriced (`usd: null`), said as "unknown price", never guessed.
 * Loaded only when a read found responses (the table is large; most signals find none).
 */
type Prices = typeof import('@pydantic/genai-prices');
let prices: Promise<Prices> | undefined;
const table = (): Promise<Prices> => (prices ??= import('@pydantic/genai-prices'));

/**
 * Loads the table now, in the background: a process that records many signals (a confined session's relay)
 * calls it as it starts, while the agent does, so the first turn's end does not wait for it (110–200 ms
 * wall, 45 ms of CPU, measured on the bench machine).
 */
export function warmPriceTable(): void {
  table().catch(() => {
    prices = undefined; // a later read tries again, and says why
  });
}

let version: string | undefined;
/** `@pydantic/genai-prices@<version>`: which table priced a figure. */
export function priceTable(): string {
  if (!version) {
    try {
      version = (createRequire(import.meta.url)('@pydantic/genai-prices/package.json') as { version: string }).version;
    } catch {
      version = 'unknown';
    }
  }
  return `@pydantic/genai-prices@${version}`;
}

/** The provider a harness's models come from, when it is sure (Claude Code's are Anthropic's); else the table matches by name. */
const PROVIDER: Readonly<Record<string, string>> = { claude: 'anthropic' };

/** The entries priced, and each priced model's context window by the table (for the context in use). */
export async function priceEntries(source: 'claude' | 'codex' | 'opencode', entries: readonly RawEntry[]): Promise<{ entries: UsageEntry[]; windows: Map<string, number> }> {
  const windows = new Map<string, number>();
  if (entries.length === 0) return { entries: [], windows };
  const { calcPrice } = await table();
  const providerId = PROVIDER[source];
  const priced = entries.map(({ at, ...e }) => {
    let usd: number | null = null;
    try {
      const usage = { input_tokens: e.input + e.cacheRead + e.cacheWrite, output_tokens: e.output, cache_read_tokens: e.cacheRead, cache_write_tokens: e.cacheWrite };
      const r = calcPrice(usage, e.model, { ...(providerId ? { providerId } : {}), timestamp: at && !Number.isNaN(Date.parse(at)) ? new Date(at) : new Date() });
      usd = r ? r.total_price : null;
      if (r?.model.context_window) windows.set(e.model, r.model.context_window);
    } catch {
      usd = null;
    }
    return { ...e, usd, priced: usd === null ? null : priceTable() };
  });
  return { entries: priced, windows };
}

