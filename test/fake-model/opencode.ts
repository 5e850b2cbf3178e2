import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { FAKE_API_KEY } from './agents.js';

/** The opencode version the adapter is checked against (pinned in package.json's devDependencies). */
export const OPENCODE_VERSION = '1.18.33';

const require = createRequire(import.meta.url);

/** opencode's native binary, as npm's postinstall placed it (the package's `bin/opencode.exe`, on every platform). */
export function opencodeProgram(): string {
  return join(dirname(require.resolve('opencode-ai/package.json')), 'bin/opencode.exe');
}

/**
 * ripgrep, which opencode's first turn runs (its file list): from PATH, else its cache, else downloaded
 * from GitHub, which a confined session does not reach and a test should not. Codex's npm package ships one.
 */
export function ripgrepProgram(): string {
  return join(dirname(require.resolve('@openai/codex-linux-x64/package.json')), 'vendor/x86_64-unknown-linux-musl/codex-path/rg');
}

let binDir: string | null = null;
/** A directory holding `opencode` and the `rg` it runs, for the front of PATH. */
export function opencodeBinDir(): string {
  if (binDir && existsSync(binDir)) return binDir;
  const dir = mkdtempSync(join(tmpdir(), 'trellis-opencode-bin-'));
  symlinkSync(opencodeProgram(), join(dir, 'opencode'));
  symlinkSync(ripgrepProgram(), join(dir, 'rg'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  binDir = dir;
  return dir;
}

/**
 * opencode's background install of `@opencode-ai/plugin` into its config folder, marked done. At each start
 * in a home where it is not, opencode installs it from npm in the background (its own in-process npm, the
 * registry reached through the sandbox's relay when confined): a test should not depend on the registry,
 * as it does not on GitHub for `rg`. (Its cost is small: the opencode row of sessions-confine-agents ran
 * 1-5 % faster without it, side by side at the same load, within the runs' noise.)
 * opencode 1.18.33 skips it when the folder has a `node_modules` and its `package-lock.json` names the
 * package at the root (its `Npm.install`: `checkNodeModules`, then `checkDirty`). The package only serves
 * plugins written by the user, and these tests load none, so nothing needs to be in `node_modules`.
 */
function seedPluginInstall(dir: string): void {
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  const dependencies = { '@opencode-ai/plugin': OPENCODE_VERSION };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ dependencies }, null, 2)}\n`);
  writeFileSync(join(dir, 'package-lock.json'), `${JSON.stringify({ lockfileVersion: 3, requires: true, packages: { '': { dependencies } } }, null, 2)}\n`);
}

/**
 * opencode's config in `home` (`~/.config/opencode/opencode.json`): one custom provider, `fake`, at the
 * fake model's Chat Completions (`@ai-sdk/openai-compatible`, bundled in the binary, so nothing is
 * installed), its only model the default, and `bash` asking for permission (opencode's default allows it).
 * Returns the environment that keeps it offline: no models.dev catalogue fetch, no self-update, no LSP
 * download, no sharing. (Without them the fetches fail quietly here; with them none is tried.)
 */
export function opencodeHome(modelUrl: string, home: string): Record<string, string> {
  const dir = join(home, '.config', 'opencode');
  mkdirSync(dir, { recursive: true });
  const config = {
    $schema: 'https://opencode.ai/config.json',
    provider: {
      fake: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Fake',
        options: { baseURL: `${modelUrl}/v1`, apiKey: FAKE_API_KEY },
        models: { 'gpt-fake': { name: 'GPT Fake', tool_call: true } },
      },
    },
    model: 'fake/gpt-fake',
    small_model: 'fake/gpt-fake',
    autoupdate: false,
    share: 'disabled',
    permission: { bash: 'ask' },
  };
  writeFileSync(join(dir, 'opencode.json'), `${JSON.stringify(config, null, 2)}\n`);
  seedPluginInstall(dir);
  return {
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    OPENCODE_DISABLE_SHARE: '1',
  };
}
