import { StaleRevisionError } from '../../events/index.js';
import { writeRawConfig } from './config-seam.js';
import { hubConfigPath, readHubFile, updateHubFile } from './hub-config.js';
import { serially } from './write-queue.js';

/** An icon: a short string (an emoji, a name), or null for none. */
export type Icon = string | null;

const stale = (what: string, expected: string, current: string) => new StaleRevisionError(`${what} changed since revision ${expected}; read it again`, current);

/** Replaces a project's trellis.json with `config` if its revision is still `expected`. */
export async function writeProjectConfig(root: string, expected: string, config: Record<string, unknown>): Promise<{ revision: string }> {
  const r = await writeRawConfig(root, expected, () => config);
  if (!r.ok) throw stale('the config', expected, r.current);
  return { revision: r.revision };
}

/** Sets (or with null clears) the icon in a project's trellis.json, leaving every other key, if its revision is still `expected`. */
export async function setProjectIcon(root: string, expected: string, icon: Icon): Promise<{ revision: string }> {
  const r = await writeRawConfig(root, expected, (current) => withIcon(current, icon));
  if (!r.ok) throw stale('the config', expected, r.current);
  return { revision: r.revision };
}

/** The host's own icon (hub.json) and the revision a write must name. */
export function readHubIcon(home: string): { icon: Icon; revision: string } {
  const { config, revision } = readHubFile(home);
  return { icon: typeof config.icon === 'string' ? config.icon : null, revision };
}

/** Sets (or clears) the host's icon if hub.json's revision is still `expected`; in hub.json's one write queue. */
export function setHubIcon(home: string, expected: string, icon: Icon): Promise<{ revision: string }> {
  return serially(hubConfigPath(home), async () => {
    const now = readHubFile(home).revision;
    if (now !== expected) throw stale('hub.json', expected, now);
    await updateHubFile(home, { icon: icon ?? undefined });
    return { revision: readHubFile(home).revision };
  });
}

/** `current` with its icon replaced (null: removed). */
export function withIcon(current: Record<string, unknown>, icon: Icon): Record<string, unknown> {
  const { icon: _old, ...rest } = current;
  return icon === null ? rest : { ...rest, icon };
}
