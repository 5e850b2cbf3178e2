import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeAtomic } from '../write-atomic.js';
import { TrellisError } from '../../events/index.js';
import type { ForgeConfig, Settings } from '../project/config.js';
import type { ForgeDriver, ForgeEntry } from './driver.js';
import { lazyDriver } from './lazy-driver.js';
import { hubTrustedForges, judgeForges, type ForgeJudgement, type ForgeRefusal } from './trust.js';

/** Bumped when a driver's saved state changes meaning: older files are then ignored. */
const STATE_FORMAT = 1;

export type DriverFactory = (config: ForgeConfig) => ForgeDriver;

/** Each configured forge's driver, its module loaded by its first call (lazy-driver.ts). */
export const defaultDriverFactory: DriverFactory = lazyDriver;

export interface RefreshResult {
  readonly changed: boolean;
  /** One line per forge that could not be read; its last listing stays. */
  readonly failures: readonly string[];
  /** One line per issue or comment a forge's listing left out, unreadable (the forge, the issue, the field). */
  readonly notes: readonly string[];
}

/**
 * The forge issues a process holds: the last listing of every configured forge. The server keeps it
 * resident and refreshes it in the background, so its reads never wait on the network; the CLI pulls it
 * live before each read. A forge that cannot be read keeps its last listing and reports why.
 */
export class ForgeSlice {
  private key = '';
  private drivers = new Map<string, ForgeDriver>();
  private listings = new Map<string, readonly ForgeEntry[]>();
  /** What each forge's last listing left out, unreadable: said with every refresh until it reads. */
  private leftOut = new Map<string, readonly string[]>();
  private listeners: (() => void)[] = [];
  private readonly started = new Map<string, number>();
  private readonly applied = new Map<string, number>();
  /** Bumped whenever a listing changes: memo keys for views built from the slice. */
  version = 0;
  /**
   * Why the forges cannot be read from trellis.json right now (it is malformed), or null. Meanwhile the
   * slice names no forge, so every local issue verb keeps working; the surfaces say why forges are missing.
   */
  configProblem: string | null = null;
  /** Committed forge entries refused a token (trust.ts): they get no driver and no request; the surfaces say which and why. */
  refused: readonly ForgeRefusal[] = [];
  /** The last judgement, kept while the settings object and hub.json's allowance are the same ones. */
  private judged: { settings: Settings; hub: object; result: ForgeJudgement } | undefined;

  constructor(
    private readonly settings: () => Settings,
    private readonly makeDriver: DriverFactory = defaultDriverFactory,
    /** Where drivers' states are kept between processes (`.git/trellis/cache`); none: every process pulls whole. */
    private readonly cacheDir?: string,
  ) {}

  /** The configured forges' store names. */
  stores(): string[] {
    return [...this.current().keys()];
  }

  driver(store: string): ForgeDriver | undefined {
    return this.current().get(store);
  }

  entries(): ForgeEntry[] {
    this.current();
    return [...this.listings.values()].flat();
  }

  find(id: string): ForgeEntry | undefined {
    return this.entries().find((e) => e.issue.id === id);
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Lists every forge (or one) now. Never throws for a forge that fails: it says so in `failures`. */
  async refresh(only?: string): Promise<RefreshResult> {
    const failures: string[] = [];
    let changed = false;
    await Promise.all(
      [...this.current()].map(async ([store, driver]) => {
        if (only !== undefined && store !== only) return;
        // A listing started before the last one applied is older than it: never let it land over it.
        const started = (this.started.get(store) ?? 0) + 1;
        this.started.set(store, started);
        try {
          const listing = await driver.list();
          if (started < (this.applied.get(store) ?? 0)) return;
          this.applied.set(store, started);
          this.leftOut.set(store, listing.notes);
          if (!listing.notModified || !this.listings.has(store)) {
            this.listings.set(store, listing.entries);
            changed = true;
            if (!listing.notModified) await this.saveState(store, driver);
          }
        } catch (err) {
          failures.push((err as Error).message);
        }
      }),
    );
    if (changed) {
      this.version++;
      for (const l of this.listeners) l();
    }
    const notes = [...this.leftOut].flatMap(([store, n]) => (only === undefined || store === only ? n : []));
    return { changed, failures, notes };
  }

  /**
   * A driver given back what it knew at its last pull in any process, so its first pull here asks only
   * for what changed since. Only the driver's state: the slice still lists a forge only once a pull of it
   * answered, so a CLI read with the forge down is local-only, as before.
   */
  private restored(config: ForgeConfig, driver: ForgeDriver): ForgeDriver {
    if (!this.cacheDir || !driver.restoreState) return driver;
    try {
      const saved = JSON.parse(readFileSync(this.statePath(config.host), 'utf8')) as { format?: unknown; config?: unknown; state?: unknown };
      // A state saved for another API URL, project or driver is someone else's: never mix them.
      if (saved.format === STATE_FORMAT && JSON.stringify(saved.config) === JSON.stringify(config)) driver.restoreState(saved.state);
    } catch {
      // No state yet, or one that cannot be read: this process pulls whole, and saves a good one.
    }
    return driver;
  }

  private async saveState(store: string, driver: ForgeDriver): Promise<void> {
    if (!this.cacheDir || !driver.saveState) return;
    try {
      const config = this.settings().forges.find((f) => f.host === store);
      if (!config) return;
      mkdirSync(this.cacheDir, { recursive: true });
      await writeAtomic(this.statePath(store), JSON.stringify({ format: STATE_FORMAT, config, state: driver.saveState() }));
    } catch {
      // A cache only: one that cannot be written costs the next process a whole pull, nothing else.
    }
  }

  private statePath(store: string): string {
    return join(this.cacheDir!, `forge-${store.replace(/[^\w.-]/g, '_')}.json`);
  }

  /** Drivers for the forges the settings name now; rebuilt when `forges` in trellis.json changes. */
  private current(): Map<string, ForgeDriver> {
    let forges;
    try {
      const settings = this.settings();
      const hub = hubTrustedForges();
      if (this.judged?.settings !== settings || this.judged.hub !== hub) this.judged = { settings, hub, result: judgeForges(settings, hub) };
      const judged = this.judged.result;
      forges = judged.allowed;
      this.refused = judged.refused;
      this.configProblem = null;
    } catch (err) {
      if (!(err instanceof TrellisError && err.code === 'CONFIG_INVALID')) throw err;
      this.configProblem = err.message;
      this.refused = [];
      return new Map();
    }
    const key = JSON.stringify(forges);
    if (key !== this.key) {
      // Built before it is adopted: a config whose driver cannot be made throws every time, not once.
      const drivers = new Map(forges.map((f) => [f.host, this.restored(f, this.makeDriver(f))]));
      this.key = key;
      this.drivers = drivers;
      for (const store of this.listings.keys()) if (!this.drivers.has(store)) this.listings.delete(store);
      for (const store of this.leftOut.keys()) if (!this.drivers.has(store)) this.leftOut.delete(store);
      this.version++;
    }
    return this.drivers;
  }
}
