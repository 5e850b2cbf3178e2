import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeProject } from '../src/store/trellis-home.js';
import { json, publishRecord, raw, standInBackend, startTestGateway } from './helpers/gateway.js';
import { cleanupRepos, git, ok, tempDir, tempRepo, trellis } from './helpers/repo.js';

afterAll(cleanupRepos);

/** `trellis projects …` with TRELLIS_HOME = `home`, run from `cwd`. */
const projects = (home: string, cwd: string, args: readonly string[]) => trellis(cwd, ['projects', ...args], { env: { TRELLIS_HOME: home } });

describe('trellis projects', () => {
  it('add, ls and rm share the catalog the dashboard lists; rm never touches the files', async () => {
    const home = tempDir();
    const repo = tempRepo();
    expect((await projects(home, repo, ['ls'])).stdout).toBe("no projects yet; add one with 'trellis projects add <path>'\n");

    const added = await projects(home, repo, ['add', '--json']);
    expect(added.code, added.stderr).toBe(0);
    expect(JSON.parse(added.stdout)).toEqual({ project: { id: encodeProject(repo), root: repo, cataloged: true }, added: true, transcript: '' });
    expect((await projects(home, tempDir(), ['add', repo])).stdout).toBe(`already registered: ${repo} as ${encodeProject(repo)}\n`);

    // A running backend is reported online, through the same probe the dashboard uses.
    const standIn = await standInBackend(repo);
    const gw = await startTestGateway(home);
    try {
      await publishRecord(home, repo, standIn.url, standIn.instanceId);
      const listed = JSON.parse((await ok(repo, ['projects', 'ls', '--json'], { env: { TRELLIS_HOME: home } })) as string);
      expect(listed.projects).toHaveLength(1);
      expect(listed.projects[0]).toMatchObject({ id: encodeProject(repo), root: repo, cataloged: true, online: true });
      expect(json(await raw(new URL('/projects', gw.url).href)).projects.map((p: { id: string }) => p.id)).toEqual([encodeProject(repo)]);
      expect((await projects(home, repo, ['ls'])).stdout).toBe(`online   ${encodeProject(repo)}  ${repo}\n`);
    } finally {
      await gw.close();
      await standIn.close();
    }

    const removed = await projects(home, tempDir(), ['rm', encodeProject(repo)]);
    expect(removed.stdout).toBe(`forgot ${repo} (${encodeProject(repo)}); its files are untouched\n`);
    expect(JSON.parse(readFileSync(join(home, 'projects.json'), 'utf8')).projects).toEqual([]);
    expect(existsSync(join(repo, '.git'))).toBe(true);
    const again = await projects(home, repo, ['rm', encodeProject(repo)]);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`trellis: no cataloged project ${encodeProject(repo)}\n`);
  });

  it('a linked worktree registers its main checkout, and rm by a path inside it finds that entry', async () => {
    const home = tempDir();
    const main = tempRepo();
    const wt = join(tempDir(), 'wt');
    git(main, 'worktree', 'add', '-q', wt, '-b', 'side');
    expect((await projects(home, wt, ['add', '.'])).stdout).toBe(`registered ${main} as ${encodeProject(main)}\n`);
    expect(JSON.parse(readFileSync(join(home, 'projects.json'), 'utf8')).projects.map((p: { root: string }) => p.root)).toEqual([main]);
    expect(JSON.parse((await projects(home, wt, ['rm', '.', '--json'])).stdout)).toMatchObject({ id: encodeProject(main), root: main });
    expect(JSON.parse(readFileSync(join(home, 'projects.json'), 'utf8')).projects).toEqual([]);
  });

  it('a plain folder only with --git; --harness runs the real trellis init there and prints its transcript', async () => {
    const home = tempDir();
    const plain = tempDir();
    const refused = await projects(home, plain, ['add']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('trellis projects add --git');
    expect(existsSync(join(home, 'projects.json'))).toBe(false);

    const r = await projects(home, plain, ['add', '--git', '--harness', 'claude']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('$ git init -q\n');
    expect(r.stdout).toContain('$ trellis init --harness claude\nwrote trellis.json\n');
    expect(r.stdout.endsWith(`registered ${plain} as ${encodeProject(plain)}\n`)).toBe(true);
    expect(JSON.parse(readFileSync(join(plain, 'trellis.json'), 'utf8')).harness).toBe('claude');
  });

  it('a failing init prints its transcript and exit code, and nothing is registered', async () => {
    const home = tempDir();
    const broken = tempRepo();
    writeFileSync(join(broken, 'trellis.json'), '{not json');
    const r = await projects(home, broken, ['add', '--init']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('$ trellis init\n');
    expect(r.stderr).toContain('is not valid JSON');
    expect(r.stderr.endsWith("trellis: 'trellis init' exited 1; nothing was registered\n")).toBe(true);
    expect(existsSync(join(home, 'projects.json'))).toBe(false);
  });

  it('a malformed catalog: ls says so and exits 1, add and rm refuse, the file is never rewritten', async () => {
    const home = tempDir();
    const repo = tempRepo();
    writeFileSync(join(home, 'projects.json'), '{"version": 1, "projects": [oops');
    const before = readFileSync(join(home, 'projects.json'));
    const ls = await projects(home, repo, ['ls', '--json']);
    expect(ls.code).toBe(1);
    expect(JSON.parse(ls.stdout).catalogError).toContain('not valid JSON');
    expect(ls.stderr).toContain('projects.json is not valid JSON');
    for (const args of [['add'], ['rm', encodeProject(repo)], ['add', '--init']]) {
      const r = await projects(home, repo, args);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr).toContain('projects.json is not valid JSON');
    }
    // Refused before anything ran: no trellis init happened in the repository.
    expect(existsSync(join(repo, 'trellis.json'))).toBe(false);
    expect(readFileSync(join(home, 'projects.json'))).toEqual(before);
  });

  it('misuse exits 2 with the usage', async () => {
    const home = tempDir();
    for (const args of [['frob'], ['rm'], ['ls', 'extra'], ['add', 'a', 'b'], ['add', '--harness'], ['ls', '--git']]) {
      const r = await projects(home, home, args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toContain('trellis projects');
    }
  });
});
