import { TrellisError } from '../../events/index.js';
import type { IssueEvent } from '../../projections/index.js';
import type { ForgeConfig } from '../project/config.js';
import { checkGitlabProject, checkOwnerName } from './config-checks.js';
import type { ForgeDriver, ForgeListing, ProbeStep } from './driver.js';

/**
 * Each driver by its config name: how its module is loaded, whether it keeps a state between processes,
 * and the config check its constructor makes, made here too so a bad config still fails as the slice
 * builds its drivers (every issue verb), not at the first pull.
 */
const KINDS: Readonly<Record<string, { load: () => Promise<new (config: ForgeConfig) => ForgeDriver>; keepsState: boolean; check: (config: ForgeConfig) => void }>> = {
  github: { load: async () => (await import('./github.js')).GitHubDriver, keepsState: false, check: checkOwnerName },
  gitlab: { load: async () => (await import('./gitlab.js')).GitLabDriver, keepsState: true, check: checkGitlabProject },
  // Forgejo is a fork of Gitea; their /api/v1 is the same for everything this driver reads and writes.
  forgejo: { load: async () => (await import('./forgejo.js')).ForgejoDriver, keepsState: true, check: checkOwnerName },
  gitea: { load: async () => (await import('./forgejo.js')).ForgejoDriver, keepsState: true, check: checkOwnerName },
};

/** The driver a config names, its module loaded at its first call (a verb that never reaches the forge loads none). */
export function lazyDriver(config: ForgeConfig): ForgeDriver {
  const kind = KINDS[config.driver];
  if (!kind) throw new TrellisError('INVALID_INPUT', `forge ${config.host}: no driver '${config.driver}' (drivers: github, gitlab, forgejo, gitea)`);
  kind.check(config);
  return new LazyDriver(config.host, async () => new (await kind.load())(config), kind.keepsState);
}

/**
 * Stands in for a driver until its first call loads it. A state restored before then is handed over as it
 * loads; the slice saves a state only after a pull, when the driver is there.
 */
class LazyDriver implements ForgeDriver {
  private loading: Promise<ForgeDriver> | undefined;
  private real: ForgeDriver | undefined;
  private pending: { state: unknown } | undefined;
  saveState?: () => unknown;
  restoreState?: (state: unknown) => void;

  constructor(
    readonly store: string,
    private readonly make: () => Promise<ForgeDriver>,
    keepsState: boolean,
  ) {
    if (keepsState) {
      this.saveState = () => (this.real ? this.real.saveState?.() : this.pending?.state);
      this.restoreState = (state) => (this.real ? this.real.restoreState?.(state) : (this.pending = { state }));
    }
  }

  private driver(): Promise<ForgeDriver> {
    this.loading ??= this.make().then((d) => {
      if (this.pending) d.restoreState?.(this.pending.state);
      this.real = d;
      return d;
    });
    return this.loading;
  }

  async list(): Promise<ForgeListing> {
    return (await this.driver()).list();
  }

  async create(input: { title: string; body: string }): Promise<{ number: number; url: string }> {
    return (await this.driver()).create(input);
  }

  async comment(number: number, body: string): Promise<void> {
    return (await this.driver()).comment(number, body);
  }

  async timeline(number: number): Promise<{ events: IssueEvent[]; notes: string[] }> {
    return (await this.driver()).timeline(number);
  }

  async close(number: number): Promise<void> {
    return (await this.driver()).close(number);
  }

  async probe(): Promise<ProbeStep[]> {
    return (await this.driver()).probe();
  }
}
