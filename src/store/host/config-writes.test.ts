import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, tempDir } from '../../../test/helpers/repo.js';
import { StaleRevisionError } from '../../events/index.js';
import { readRawConfig } from './config-seam.js';
import { readHubIcon, setHubIcon, setProjectIcon, writeProjectConfig } from './config-writes.js';
import { addHost, readHosts } from './hosts.js';
import { readQuietSettings, writeQuietSettings } from './notify-writes.js';

afterAll(cleanupRepos);

const refusal = (p: Promise<unknown>) => p.then(() => expect.fail('the write was accepted'), (err: unknown) => err);

describe('writeProjectConfig', () => {
  it('writes at the current revision; a stale one refuses naming the current revision and leaves the bytes', async () => {
    const root = tempDir();
    const { revision } = await writeProjectConfig(root, 'absent', { name: 'One' });
    expect(revision).toBe(readRawConfig(root).revision);
    const before = readFileSync(join(root, 'trellis.json'));
    const err = await refusal(writeProjectConfig(root, 'absent', { name: 'Lost' }));
    expect(err).toBeInstanceOf(StaleRevisionError);
    expect((err as StaleRevisionError).code).toBe('STALE_REVISION');
    expect((err as StaleRevisionError).current).toBe(revision);
    expect(readFileSync(join(root, 'trellis.json'))).toEqual(before);
  });
});

describe('setProjectIcon', () => {
  it('sets and clears only the icon, keeping every other key', async () => {
    const root = tempDir();
    writeFileSync(join(root, 'trellis.json'), '{"name": "Keep", "specRoot": "specs"}\n');
    const set = await setProjectIcon(root, readRawConfig(root).revision, '🫖');
    expect(JSON.parse(readRawConfig(root).text)).toEqual({ name: 'Keep', specRoot: 'specs', icon: '🫖' });
    await setProjectIcon(root, set.revision, null);
    expect(JSON.parse(readRawConfig(root).text)).toEqual({ name: 'Keep', specRoot: 'specs' });
    expect(await refusal(setProjectIcon(root, set.revision, 'x'))).toBeInstanceOf(StaleRevisionError);
  });
});

describe('setHubIcon', () => {
  it('of ten concurrent writes naming one revision, exactly one wins', async () => {
    const home = tempDir();
    const { revision } = readHubIcon(home);
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => setHubIcon(home, revision, `icon ${i}`)));
    const won = results.filter((r) => r.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(StaleRevisionError);
    const now = readHubIcon(home);
    expect(now.revision).toBe((won[0] as PromiseFulfilledResult<{ revision: string }>).value.revision);
    expect(now.icon).toMatch(/^icon \d$/);
    await setHubIcon(home, now.revision, null);
    expect(readHubIcon(home).icon).toBeNull();
  });
});

describe('hub.json writers', () => {
  it('a host added, the quiet hours and the icon set at the same moment: nothing acknowledged is lost (one queue per file)', async () => {
    const home = tempDir();
    const icon = readHubIcon(home).revision;
    const quiet = readQuietSettings(home).revision;
    const [host, muted, iconSet] = await Promise.allSettled([
      addHost(home, { name: 'box', destination: 'me@box', trellis: 'trellis' }),
      writeQuietSettings(home, quiet, { mute: ['a-project'], quietHours: null }),
      setHubIcon(home, icon, '🫖'),
    ]);
    // The host is not revision-checked: it always lands. The other two named the revision before it, so
    // each either lands or is refused as stale; never acknowledged and then overwritten.
    expect(host.status).toBe('fulfilled');
    expect(readHosts(home).map((h) => h.name)).toEqual(['box']);
    if (muted.status === 'fulfilled') expect(readQuietSettings(home).mute).toEqual(['a-project']);
    else expect(muted.reason).toBeInstanceOf(StaleRevisionError);
    if (iconSet.status === 'fulfilled') expect(readHubIcon(home).icon).toBe('🫖');
    else expect(iconSet.reason).toBeInstanceOf(StaleRevisionError);
  });
});
