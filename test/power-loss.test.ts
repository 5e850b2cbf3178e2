import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, cleanupRepos, fsck, git, ok, ROOT, tempDir, tempRepo, testEnv, trellis } from './helpers/repo.js';
import { startServe } from './helpers/serve.js';
import { openProject } from '../src/store/compose/open-project.js';
import { openIssue, replyToIssue } from '../src/store/issues/verbs.js';
import { waitFor } from './helpers/wait.js';

afterAll(cleanupRepos);

/**
 * Issue 19, row 13: power loss. Every file Trellis publishes into git is fsynced before the rename that
 * publishes it and its folder after (seen in the real syscalls, with strace); a zero-length or garbage
 * ref under refs/trellis/ never breaks a read, doctor names it, and doctor --repair restores it or moves
 * it aside.
 */
describe('every git write is on the disk before the rename that publishes it, and the rename after', () => {
  /** The syscalls of one CLI run and its children: fsync (with the file each fd is), rename and execve. */
  function traced(dir: string, args: string[]): string[] {
    const log = join(tempDir(), 'strace.log');
    execFileSync('strace', ['-f', '-y', '-qq', '-e', 'trace=fsync,rename,renameat,renameat2,execve', '-o', log, process.execPath, BIN, ...args], { cwd: dir, env: testEnv(dir), stdio: 'ignore' });
    return readFileSync(log, 'utf8').split('\n');
  }
  const cases = [
    { name: 'issue open', args: (_id: string, _file: string) => ['issue', 'open', 'traced'], published: ['/objects/', '/refs/trellis/'] },
    { name: 'issue reply', args: (id: string, _file: string) => ['issue', 'reply', id, '--body', 'traced'], published: ['/objects/', '/refs/trellis/'] },
    { name: 'issue close', args: (id: string, _file: string) => ['issue', 'close', id], published: ['/objects/', '/refs/trellis/'] },
    // The bulk path: git fast-import writes the objects (with core.fsync), Trellis adds the refs to packed-refs.
    { name: 'issues import', args: (_id: string, file: string) => ['issues', 'import', file], published: ['/packed-refs'] },
  ];
  it.each(cases)('$name: each file fsynced before the rename that publishes it, its folder after', async ({ name, args, published }) => {
    // The export to import: made only for the case that imports it (three CLI runs the others never read).
    const file = join(tempDir(), 'export.ndjson');
    if (name === 'issues import') {
      const source = tempRepo();
      await ok(source, ['init']);
      await ok(source, ['issue', 'open', 'exported']);
      writeFileSync(file, await ok(source, ['issues', 'export']));
    }
    const dir = tempRepo();
    await ok(dir, ['init']);
    const id = (await ok(dir, ['issue', 'open', 'first'])).trim();
    const lines = traced(dir, args(id, file));
    const gitdir = join(dir, '.git');
    // The processes that became git (fast-import, update-ref): every other line is Trellis's own.
    const gitPids = new Set(lines.filter((l) => /execve\("[^"]*\/git"/.test(l)).map((l) => l.split(' ')[0]));
    const renames = lines.flatMap((l, at) => {
      const m = /rename(?:at2?)?\((?:[^,]*, )?"([^"]+)", (?:[^,]*, )?"([^"]+)"/.exec(l);
      return m && m[2]!.startsWith(gitdir) ? [{ at, from: m[1]!, to: m[2]!, ours: !gitPids.has(l.split(' ')[0]) }] : [];
    });
    for (const kind of published) expect(renames.some((r) => r.ours && r.to.includes(kind)), `a rename into ${kind}`).toBe(true);
    const fsyncOf = (path: string, from: number, to: number) => lines.slice(from, to).some((l) => l.includes(`fsync(`) && l.includes(`<${path}>`) && / = 0$/.test(l));
    for (const r of renames) {
      expect(fsyncOf(r.from, 0, r.at), `fsync of ${r.from} before its rename`).toBe(true);
      // git's own renames (a child's staging ref) follow git's contract, core.fsync; the folder sync is ours.
      if (r.ours) expect(fsyncOf(dirname(r.to), r.at, lines.length), `fsync of ${dirname(r.to)} after the rename`).toBe(true);
    }
  });
});

describe('a zero-length or garbage ref under refs/trellis/', () => {
  /**
   * A project with two threads, A (to be damaged) and B; the projection cache has seen both. The threads
   * are written in-process by the verbs the CLI calls (the writes are not what is tested here); the read
   * that fills the cache is the CLI's.
   */
  async function project() {
    const dir = tempRepo();
    await ok(dir, ['init']);
    const p = openProject(dir);
    const a = (await openIssue(p, { concern: 'thread A', by: 'setup' })).id;
    await replyToIssue(p, a, { body: 'A has a reply', by: 'setup' });
    const b = (await openIssue(p, { concern: 'thread B', by: 'setup' })).id;
    await ok(dir, ['issues']);
    const refPath = join(dir, '.git', 'refs', 'trellis', 'issues', a);
    return { dir, a, b, refPath, tip: readFileSync(refPath, 'utf8').trim() };
  }
  const cases = [
    { name: 'zero-length, cache present', damage: '', cache: true, reflog: false, repaired: 'from the projection cache' },
    { name: 'garbage, cache present', damage: 'x\u0000\u001b[2Jgarbage', cache: true, reflog: false, repaired: 'from the projection cache' },
    { name: 'zero-length, a reflog, no cache', damage: '', cache: false, reflog: true, repaired: 'from the reflog' },
    { name: 'zero-length, neither reflog nor cache', damage: '', cache: false, reflog: false, repaired: 'moved damaged ref' },
  ];
  it.each(cases)('$name: reads skip it with one warning, doctor names it, doctor --repair: $repaired', async ({ damage, cache, reflog, repaired }) => {
    const { dir, a, b, refPath, tip } = await project();
    const ref = `refs/trellis/issues/${a}`;
    if (reflog) {
      // Trellis's own writes keep no reflog; git's do where it is asked to (core.logAllRefUpdates=always).
      git(dir, 'update-ref', '-d', ref);
      git(dir, '-c', 'core.logAllRefUpdates=always', 'update-ref', '--create-reflog', ref, tip);
    }
    if (!cache) rmSync(join(dir, '.git', 'trellis', 'cache'), { recursive: true, force: true });
    writeFileSync(refPath, damage);

    // Reads go on without it, saying so once.
    const list = await trellis(dir, ['issues', '--json']);
    expect(list.code, list.stderr).toBe(0);
    expect((JSON.parse(list.stdout) as { id: string }[]).map((i) => i.id)).toEqual([b]);
    expect(list.stderr.trim().split('\n')).toHaveLength(1);
    expect(list.stderr).toContain(refPath);
    expect(list.stderr).toContain('doctor --repair');
    expect((await trellis(dir, ['issue', 'show', b])).code).toBe(0);

    const doctor = await trellis(dir, ['doctor']);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toContain(`damaged ref ${ref}`);

    const repair = await trellis(dir, ['doctor', '--repair']);
    expect(repair.stdout).toContain(repaired);
    if (repaired === 'moved damaged ref') {
      const to = /aside to (\S+):/.exec(repair.stdout)![1]!;
      expect(readFileSync(to, 'utf8')).toBe(damage);
      expect(existsSync(refPath)).toBe(false);
      expect((JSON.parse(await ok(dir, ['issues', '--json'])) as { id: string }[]).map((i) => i.id)).toEqual([b]);
    } else {
      expect(readFileSync(refPath, 'utf8')).toBe(`${tip}\n`);
      const after = await trellis(dir, ['issues', '--json']);
      expect(after.stderr).toBe('');
      expect((JSON.parse(after.stdout) as { id: string }[]).map((i) => i.id).sort()).toEqual([a, b].sort());
      expect(JSON.parse(await ok(dir, ['issue', 'show', a, '--json'])).replies[0].body).toBe('A has a reply');
    }
    // git itself reads the repository again, and doctor is clean.
    expect(fsck(dir)).toBe('');
    expect((await trellis(dir, ['doctor'])).stdout).not.toContain('damaged ref');
  });

  it('a running server answers with the damaged ref skipped, one warning in its log for many reads', async () => {
    const { dir, a, b, refPath } = await project();
    const env = { ...testEnv(dir), TRELLIS_HOME: tempDir(), TRELLIS_DRAIN_MS: '200' };
    const s = await startServe(ROOT, dir, env);
    try {
      writeFileSync(refPath, '');
      // The server notices the change (file events) and reads again: A goes, B stays.
      const ids = await waitFor(async () => {
        const r = await fetch(new URL('/api/issues', s.url));
        if (r.status !== 200) throw new Error(`GET /api/issues: ${r.status} ${await r.text()}`);
        const list = ((await r.json()) as { issues: { id: string }[] }).issues.map((i) => i.id);
        return list.includes(a) ? undefined : list;
      }, 'the server to skip the damaged ref');
      expect(ids).toEqual([b]);
      for (let i = 0; i < 5; i++) expect((await fetch(new URL('/api/issues', s.url))).status).toBe(200);
      expect(s.errLines.filter((l) => l.includes(refPath))).toHaveLength(1);
    } finally {
      await s.stop();
    }
  }, 60_000);
});
