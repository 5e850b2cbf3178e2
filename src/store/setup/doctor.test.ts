import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, tempDir, tempRepo } from '../../../test/helpers/repo.js';
import { diagnoseProject } from './doctor.js';
import { initProject } from './init-project.js';

afterAll(cleanupRepos);

describe('init and doctor as verbs: they answer data, the CLI prints it', () => {
  it('init says each change once; a second run changes nothing', async () => {
    const dir = tempRepo();
    const first = await initProject(dir, { harness: 'shell' });
    expect(first.said).toEqual(['wrote trellis.json', 'wrote specs/index.md, a first node', 'added trellis.local.json to .gitignore']);
    expect(await initProject(dir)).toEqual({
      root: first.root,
      said: [],
      skipped: ['kept trellis.json as it is (it exists)', 'did not write specs/index.md: specs/ already holds 1 spec node', 'kept .gitignore as it is (it ignores trellis.local.json)'],
      uncommitted: first.uncommitted,
    });
  });

  it('init and doctor say what is not committed yet, with the commands that commit it: a session starts from trunk and would not see it', async () => {
    const dir = tempRepo();
    const first = await initProject(dir);
    expect(first.uncommitted).toEqual({ paths: ['trellis.json', 'specs', '.gitignore'], commit: "git add trellis.json specs .gitignore && git commit -m 'Set up Trellis'" });
    const before = await diagnoseProject(dir);
    expect(before).toContainEqual({ level: 'warn', what: expect.stringMatching(/^not committed: trellis\.json, specs /), repair: "git add trellis.json specs && git commit -m 'Set up Trellis'" });
    execSync(first.uncommitted!.commit, { cwd: dir });
    expect((await initProject(dir)).uncommitted).toBeNull();
    expect((await diagnoseProject(dir)).some((f) => f.what.startsWith('not committed'))).toBe(false);
  });

  it('init outside a repository is refused with its repair, unless asked to create one', async () => {
    const dir = tempDir();
    await expect(initProject(dir)).rejects.toMatchObject({ code: 'NOT_A_REPOSITORY', message: expect.stringContaining("'trellis init --git'") });
    expect((await initProject(dir, { git: true })).said[0]).toMatch(/^created a git repository in /);
  });

  it('doctor answers findings with levels and repairs; a broken trellis.json is an error naming its repair', async () => {
    const dir = tempRepo();
    await initProject(dir);
    const healthy = await diagnoseProject(dir);
    expect(healthy.filter((f) => f.level === 'error')).toEqual([]);
    expect(healthy).toContainEqual({ level: 'ok', what: 'trellis.json is valid' });
    writeFileSync(join(dir, 'trellis.json'), '{ "specRoot": ');
    const broken = await diagnoseProject(dir);
    expect(broken.find((f) => f.level === 'error')).toMatchObject({ what: expect.stringContaining('trellis.json'), repair: expect.stringContaining("run 'trellis init'") });
  });

  it('doctor on a brand-new project reports only what it found: no cache file yet is not an unreadable one', async () => {
    const dir = tempRepo();
    execSync((await initProject(dir)).uncommitted!.commit, { cwd: dir });
    const cache = join(dir, '.git', 'trellis', 'cache', 'issues.json');
    const findings = await diagnoseProject(dir);
    expect(existsSync(cache)).toBe(false);
    expect(findings.filter((f) => f.level !== 'ok')).toEqual([]);
    expect(findings).toContainEqual({ level: 'ok', what: 'no projection cache yet (it is written when there are threads to cache)' });
    // A cache file that is there and cannot be read is still named, with its repair.
    mkdirSync(join(dir, '.git', 'trellis', 'cache'), { recursive: true });
    writeFileSync(cache, 'not json');
    expect(await diagnoseProject(dir)).toContainEqual({ level: 'warn', what: `projection cache ${cache} is unreadable`, repair: 'delete it; it is rebuilt from the refs' });
  });

  it('doctor probes confinement: bubblewrap found and starting a sandbox is ok; missing, an error naming the install and the way out; "off", a warning saying what it means', async () => {
    const dir = tempRepo();
    await initProject(dir, { harness: 'shell' });
    expect(await diagnoseProject(dir)).toContainEqual({ level: 'ok', what: expect.stringMatching(/^bubblewrap \d+\.\d+\S* \(\/\S+\/bwrap\) starts a session's sandbox: shell, claude, codex, gemini, opencode sessions run confined$/) });
    const missing = await diagnoseProject(dir, { env: { ...process.env, PATH: tempDir() } });
    expect(missing).toContainEqual({
      level: 'error',
      what: 'bubblewrap (bwrap) is not on PATH: spawning a shell, claude, codex, gemini, opencode session is refused',
      repair: 'install bubblewrap (apt-get install bubblewrap; dnf install bubblewrap), or run sessions unconfined with "sessions": { "confine": "off" } in trellis.json',
    });
    writeFileSync(join(dir, 'trellis.json'), JSON.stringify({ harness: 'claude', sessions: { confine: 'off' } }));
    const off = await diagnoseProject(dir);
    expect(off.filter((f) => /confine|bubblewrap/.test(f.what))).toEqual([expect.objectContaining({ level: 'warn', what: expect.stringContaining('sessions.confine is "off": every session runs unconfined') })]);
    // Every harness runs confined (issue 45), opencode too (through the relay to its own server): no harness is named unconfined.
    for (const harness of ['claude', 'opencode']) {
      writeFileSync(join(dir, 'trellis.json'), JSON.stringify({ harness }));
      expect((await diagnoseProject(dir)).filter((f) => /runs unconfined/.test(f.what))).toEqual([]);
    }
  });
});
