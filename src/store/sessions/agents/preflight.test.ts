import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { preflight } from './preflight.js';

const made: string[] = [];
afterAll(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));
const dir = () => {
  const d = mkdtempSync(join(tmpdir(), 'trellis-preflight-'));
  made.push(d);
  return d;
};

/** A PATH holding stand-in `claude` and `codex` programs; codex's `login status` exits `loginExit`. */
function bin(loginExit = 0): string {
  const d = dir();
  writeFileSync(join(d, 'claude'), '#!/bin/sh\nexit 0\n');
  writeFileSync(join(d, 'codex'), `#!/bin/sh\n[ "$1 $2" = "login status" ] && exit ${loginExit}\nexit 0\n`);
  chmodSync(join(d, 'claude'), 0o755);
  chmodSync(join(d, 'codex'), 0o755);
  return d;
}

const KEY = 'sk-ant-test-0123456789abcdefghijklmnop';

describe('preflight: what the agent’s own config says its first run will ask', () => {
  it('an agent not on PATH is refused naming it and how to install it; shell needs nothing', async () => {
    const env = { PATH: dir(), HOME: dir() };
    await expect(preflight('claude', { mainRoot: '/r', env })).rejects.toMatchObject({ code: 'HARNESS_NOT_INSTALLED', message: expect.stringContaining("npm install -g @anthropic-ai/claude-code") });
    await expect(preflight('codex', { mainRoot: '/r', env })).rejects.toMatchObject({ code: 'HARNESS_NOT_INSTALLED', message: expect.stringContaining('--harness shell'), details: { harness: 'codex', program: 'codex' } });
    expect(await preflight('shell', { mainRoot: '/r', env })).toEqual([]);
  });

  it('claude: onboarding, trust of the main checkout (or a folder above it), and the key’s approval', async () => {
    const home = dir();
    const root = '/work/project';
    const env = { PATH: bin(), HOME: home, ANTHROPIC_API_KEY: KEY };
    const write = (state: object) => writeFileSync(join(home, '.claude.json'), JSON.stringify(state));
    const all = await preflight('claude', { mainRoot: root, env });
    expect(all).toEqual([expect.stringContaining('has not been set up'), expect.stringContaining(`has not trusted ${root}`), expect.stringContaining('Detected a custom API key')]);

    write({ hasCompletedOnboarding: true, projects: { '/work': { hasTrustDialogAccepted: true } }, customApiKeyResponses: { approved: [KEY.slice(-20)], rejected: [] } });
    expect(await preflight('claude', { mainRoot: root, env })).toEqual([]);

    write({ hasCompletedOnboarding: true, projects: { [root]: { hasTrustDialogAccepted: false } }, customApiKeyResponses: { approved: [], rejected: [KEY.slice(-20)] } });
    expect(await preflight('claude', { mainRoot: root, env })).toEqual([expect.stringContaining(`has not trusted ${root}`), expect.stringContaining('has rejected the ANTHROPIC_API_KEY')]);

    // No key: logged in only with credentials of its own.
    const noKey = { PATH: env.PATH, HOME: home };
    write({ hasCompletedOnboarding: true, projects: { [root]: { hasTrustDialogAccepted: true } } });
    expect(await preflight('claude', { mainRoot: root, env: noKey })).toEqual([expect.stringContaining('not logged in')]);
    mkdirSync(join(home, '.claude'));
    writeFileSync(join(home, '.claude', '.credentials.json'), '{}');
    expect(await preflight('claude', { mainRoot: root, env: noKey })).toEqual([]);
  });

  it('codex: login only for OpenAI’s own provider; trust from config.toml', async () => {
    const codexHome = dir();
    const root = '/work/project';
    const config = (text: string) => writeFileSync(join(codexHome, 'config.toml'), text);
    const loggedOut = { PATH: bin(1), HOME: dir(), CODEX_HOME: codexHome };
    expect(await preflight('codex', { mainRoot: root, env: loggedOut })).toEqual([expect.stringContaining("codex login"), expect.stringContaining(`has not trusted ${root}`)]);
    config(`model_provider = "local"\n\n[projects."${root}"]\ntrust_level = "trusted"\n`);
    expect(await preflight('codex', { mainRoot: root, env: loggedOut })).toEqual([]);
    // A provider named inside a table is not the top-level setting; untrusted is not trusted.
    config(`[profiles.x]\nmodel_provider = "local"\n\n[projects."${root}"]\ntrust_level = "untrusted"\n`);
    expect(await preflight('codex', { mainRoot: root, env: loggedOut })).toHaveLength(2);
    expect(await preflight('codex', { mainRoot: root, env: { ...loggedOut, PATH: bin(0) } })).toEqual([expect.stringContaining('has not trusted')]);
  });
});
