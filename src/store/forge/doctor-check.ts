import type { Settings } from '../project/config.js';
import type { ProbeStep } from './driver.js';
import { defaultDriverFactory, type DriverFactory } from './slice.js';
import { judgeForges, refusalLine } from './trust.js';

/**
 * Doctor's check of every configured forge, all at once: the probe steps of each, or, for an entry no
 * driver can be made from, that entry's problem and its repair; an entry refused a token (trust.ts) is
 * named with why, and never asked.
 */
export async function probeForges(settings: Pick<Settings, 'forges' | 'forgesFrom' | 'trustedForges'>, makeDriver: DriverFactory = defaultDriverFactory): Promise<ProbeStep[]> {
  const { allowed, refused } = judgeForges(settings);
  const each = await Promise.all(
    allowed.map(async (f): Promise<ProbeStep[]> => {
      let driver;
      try {
        driver = makeDriver(f);
      } catch (err) {
        return [{ ok: false, what: (err as Error).message, repair: `fix the "forges" entry for ${f.host} in trellis.json (docs/forges.md)` }];
      }
      return driver.probe();
    }),
  );
  return [...refused.map((r): ProbeStep => ({ ok: false, what: refusalLine(r), repair: r.repair })), ...each.flat()];
}
