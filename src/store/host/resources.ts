import { statfsSync } from 'node:fs';
import { cpus, freemem, loadavg, totalmem } from 'node:os';
import type { ResourceInventory } from '../../projections/resources.js';

/** The host's resources as of now. */
export function resourceInventory(path: string, sessions: ResourceInventory['sessions'], now: Date): ResourceInventory {
  let disk: ResourceInventory['disk'] = null;
  try {
    const st = statfsSync(path);
    disk = { path, totalBytes: st.blocks * st.bsize, freeBytes: st.bavail * st.bsize };
  } catch {}
  return {
    at: now.toISOString(),
    cpus: cpus().length,
    load: loadavg().map((l) => Math.round(l * 100) / 100),
    memory: { totalBytes: totalmem(), freeBytes: freemem() },
    disk,
    sessions,
  };
}
