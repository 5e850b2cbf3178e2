import { StaleRevisionError } from '../../events/index.js';
import type { QuietHours } from '../../projections/notify-quiet.js';
import { hubConfigPath, readHubFile, updateHubFile } from './hub-config.js';
import { parseNotifyConfig } from './notify-config.js';
import { serially } from './write-queue.js';

/** What the page changes of hub.json `notify`: the muted projects and the quiet hours. */
export interface QuietSettings {
  readonly mute: readonly string[];
  readonly quietHours: QuietHours | null;
}

/** The quiet settings as hub.json holds them, and the revision a write must name. */
export function readQuietSettings(home: string): QuietSettings & { revision: string } {
  const { config, revision } = readHubFile(home);
  const n = parseNotifyConfig(config.notify);
  return { mute: n.mute, quietHours: n.quietHours ?? null, revision };
}

/**
 * Sets the muted projects and the quiet hours if hub.json's revision is still `expected`, leaving every
 * other `notify` key (targets, debounce) as it is; checked as the gateway will read it before writing.
 */
export function writeQuietSettings(home: string, expected: string, s: QuietSettings): Promise<{ revision: string }> {
  // In hub.json's one queue (write-queue.ts): no other writer's change lands between the check and the write.
  return serially(hubConfigPath(home), async () => {
    const { config, revision } = readHubFile(home);
    if (revision !== expected) throw new StaleRevisionError(`hub.json changed since revision ${expected}; read it again`, revision);
    const { quietHours: _old, ...rest } = (typeof config.notify === 'object' && config.notify !== null ? config.notify : {}) as Record<string, unknown>;
    const notify = { ...rest, mute: [...new Set(s.mute)], ...(s.quietHours ? { quietHours: s.quietHours } : {}) };
    parseNotifyConfig(notify);
    await updateHubFile(home, { notify });
    return { revision: readHubFile(home).revision };
  });
}
