import type { ForgeConfig } from '../project/config.js';
import type { ProbeStep } from './driver.js';
import { defaultDriverFactory, type DriverFactory } from './slice.js';

/**
 * Doctor's check of every configured forge, all at once: the probe steps of each, or, for an entry no
 * driver can be made from, that entry's problem and its repair.
 */
export async function probeForges(forges: readonly ForgeConfig[], makeDriver: DriverFactory = defaultDriverFactory): Promise<ProbeStep[]> {
  const each = await Promise.all(
    forges.map(async (f): Promise<ProbeStep[]> => {
      let driver;
      try {
        driver = makeDriver(f);
      } catch (err) {
        return [{ ok: false, what: (err as Error).message, repair: `fix the "forges" entry for ${f.host} in trellis.json (README: Forge issues)` }];
      }
      return driver.probe();
    }),
  );
  return each.flat();
}
