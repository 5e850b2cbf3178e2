import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { inboxOf } from '../src/projections/inbox.js';
import { sandboxArgv } from '../src/store/sessions/confine/confine.js';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { BIN, cleanupRepos, git, ok, tempDir, tempRepo, testEnv, trellis } from './helpers/repo.js';
import { serveDir } from './helpers/server.js';
import { killTmux, tmux, waitFor } from './helpers/sessions.js';

/*
 * Agents as untrusted principals (issue 45): a session's process tree runs confined, so what it types —
 * however it names itself — cannot write a person's verdict, the main checkout, another session's
 * worktree, Trellis's home or the user's keys, nor reach the serve on loopback. Driven as an agent
 * would: commands typed into a real `shell` session's pane (real tmux, real git, real bubblewrap).
 */

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) killTmux(h);
});
afterAll(() => cleanupRepos());

const SPEC = '---\nscenarios:\n  - { id: cart/total, run: "grep -q total=42 cart.txt" }\n  - { id: cart/script, run: "sh check.sh" }\n---\n# Cart\n';

/** A project whose node shop/cart declares a scenario over cart.txt. */
function project(local: Record<string, unknown> = {}): { dir: string; home: string } {
  const dir = tempRepo();
  const home = testEnv(dir).TRELLIS_HOME!;
  homes.push(home);
  mkdirSync(join(dir, 'specs/shop'), { recursive: true });
  writeFileSync(join(dir, 'specs/shop/cart.md'), SPEC);
  writeFileSync(join(dir, 'cart.txt'), 'total=42\n');
  writeFileSync(join(dir, 'check.sh'), 'exit 0\n');
  writeFileSync(join(dir, '.gitignore'), '.trellis-home/\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'cart');
  writeFileSync(join(dir, 'trellis.local.json'), JSON.stringify({ sessions: { minFreeMb: 0, max: 8, pool: 0, ...local } }));
  return { dir, home };
}


let row = 0;
/**
 * Types `commands` into the session's pane as its agent would, as one line, and waits for the last to
 * finish: the exit status each printed (each command's own marker, so no earlier one answers a later one).
 */
async function typedAll(dir: string, home: string, id: string, commands: readonly string[]): Promise<number[]> {
  const marks = commands.map(() => `row${++row}`);
  await ok(dir, ['session', 'prompt', id, '--body', commands.map((c, i) => `${c}; echo "${marks[i]}=$?"`).join('; ')]);
  const screen = () => tmux(home, 'capture-pane', '-p', '-J', '-S', '-1000', '-t', `=${id}:`) ?? '';
  const codes = (text: string) => marks.map((m) => new RegExp(`^${m}=(\\d+)$`, 'm').exec(text)?.[1]);
  const seen = await waitFor(`'${commands.at(-1)}' to finish in the pane`, () => codes(screen()).every((c) => c !== undefined) && codes(screen()), 30_000).catch((err: Error) => {
    throw new Error(`${err.message}; the pane shows:\n${screen()}`);
  });
  return seen.map(Number);
}
const typed = async (dir: string, home: string, id: string, command: string): Promise<number> => (await typedAll(dir, home, id, [command]))[0]!;

describe('a confined shell session, typed into as an agent would', () => {
  it('cannot write the main checkout, ~/.ssh, refs/trellis/*, trunk or another worktree, read the Trellis home, reach the serve, or accept its own changed check as a person; it commits on its own branch, runs tests and installs into its worktree', async () => {
    const { dir, home } = project();
    // Its own HOME, with keys in it, so nothing of the machine's is touched.
    const userHome = join(home, '..', 'user-home');
    mkdirSync(join(userHome, '.ssh'), { recursive: true });
    writeFileSync(join(userHome, '.ssh', 'id_test'), 'PRIVATE KEY\n');
    // Pasted files land in the uploads folder (here under /tmp, which the sandbox makes private) and their paths are typed in.
    const uploads = join(tempDir(), 'uploads');
    const env = { HOME: userHome, TRELLIS_UPLOADS_DIR: uploads };
    const cli = (args: string[]) => ok(dir, args, { env });
    await cli(['eval', 'run', '--by', 'ci']);
    const { id: other, worktree: otherTree } = JSON.parse(await cli(['session', 'spawn', 'other', '--harness', 'shell', '--json']));
    const view = JSON.parse(await cli(['session', 'spawn', 'work', '--harness', 'shell', '--node', 'shop/cart', '--json']));
    const id: string = view.id;
    expect(view.confinement).toEqual({ confined: true, by: expect.stringMatching(/^bubblewrap \d+\.\d+/) });
    expect(await cli(['session', 'show', id])).toMatch(/^confined by bubblewrap \d/m);
    const hub = join(home, 'hub.json');
    writeFileSync(hub, '{"secret": "hub-secret-42"}\n');

    // The branch rewrites its own check, as in issue 45: the gate reads `changed` and blocks.
    expect(await typed(dir, home, id, 'sed -i s/total=42/total=41/ cart.txt && sed -i s/grep.-q.total=42.cart.txt/true/ specs/shop/cart.md && git commit -qam rewrite')).toBe(0);
    expect(git(dir, 'log', '-1', '--format=%s', `trellis/${id}`).trim()).toBe('rewrite');
    expect((await trellis(dir, ['session', 'check', id])).stdout).toContain('changed        cart/total');

    // The in-process serve's runtime reads TRELLIS_HOME from this process: the test's own tmux socket.
    const savedHome = process.env.TRELLIS_HOME;
    process.env.TRELLIS_HOME = home;
    const api = await serveDir(dir);
    try {
      // Every ref but the session's own log, which the test's prompts append to.
      const refs = () => git(dir, 'for-each-ref', '--format=%(refname) %(objectname)').split('\n').filter((l) => !l.startsWith(`refs/trellis/sessions/${id} `));
      const before = refs();
      const trellisCli = `${process.execPath} ${BIN}`;
      const rows: [string, string][] = [
        ['write in the main checkout', `echo planted > ${join(dir, 'planted.txt')}`],
        ['write ~/.ssh/x', 'echo planted > ~/.ssh/x'],
        ['read $TRELLIS_HOME/hub.json', `cat ${hub}`],
        ['git update-ref refs/trellis/…', `git update-ref refs/trellis/sessions/${id} HEAD`],
        ['git update-ref trunk', 'git update-ref refs/heads/main HEAD'],
        ['HTTP to the serve’s accept route', `curl -sS -m 5 -X POST -H 'content-type: application/json' -d '{"reason":"r","by":"alice"}' ${api.url.replace(/\/$/, '')}/api/sessions/${id}/accept`],
        ['accept its own changed check as alice', `env -u TRELLIS_SESSION ${trellisCli} session accept ${id} --reason reviewed --by alice`],
        ['override its own gate as alice', `env -u TRELLIS_SESSION ${trellisCli} session merge ${id} --override mine --by alice`],
        ['edit another session’s worktree', `echo planted > ${join(otherTree, 'planted.txt')}`],
        ['move another session’s branch', `git update-ref refs/heads/trellis/${other} HEAD`],
      ];
      const codes = await typedAll(dir, home, id, rows.map(([, command]) => command));
      expect(rows.map(([what], i) => [what, codes[i] === 0 ? 'did it' : 'refused'])).toEqual(rows.map(([what]) => [what, 'refused']));
      // Nothing changed: no file planted, no ref moved, no secret on screen, no person's decision logged.
      expect([existsSync(join(dir, 'planted.txt')), existsSync(join(userHome, '.ssh', 'x')), existsSync(join(otherTree, 'planted.txt'))]).toEqual([false, false, false]);
      expect(refs()).toEqual(before);
      const screen = tmux(home, 'capture-pane', '-p', '-J', '-S', '-1000', '-t', `=${id}:`);
      expect(screen).not.toContain('hub-secret-42');
      // The refused verdicts say why, in words, and where a person makes them.
      expect(screen).toMatch(/trellis: cannot write \S+: it is read-only here\. A session's terminal runs confined, .* made from a terminal outside the session, or from the page/);
      expect(git(dir, 'log', '--format=%s', `refs/trellis/sessions/${id}`)).not.toMatch(/accepted|overridden/);
      const after = await trellis(dir, ['session', 'check', id]);
      expect([after.code, after.stdout]).toEqual([1, expect.stringContaining('changed        cart/total')]);
      expect(after.stdout).not.toContain('ready to merge');
    } finally {
      await api.close();
      if (savedHome === undefined) delete process.env.TRELLIS_HOME;
      else process.env.TRELLIS_HOME = savedHome;
    }

    // What it may do: commit on its own branch, run its tests, install a package into its worktree.
    const pkg = JSON.stringify({ name: 'w', version: '1.0.0', private: true, scripts: { test: 'node -e "process.exit(require(\'fs\').existsSync(\'cart.txt\') ? 0 : 1)"' } });
    writeFileSync(join(view.worktree, 'package.json'), pkg);
    mkdirSync(join(view.worktree, 'dep'));
    writeFileSync(join(view.worktree, 'dep', 'package.json'), JSON.stringify({ name: 'dep', version: '1.0.0' }));
    // Its check's script is its own code: it tries, when a person measures the session, what it could not do itself.
    writeFileSync(join(view.worktree, 'check.sh'), `echo planted > ${join(dir, 'planted-by-check.txt')}; git update-ref refs/trellis/forged HEAD; exit 0\n`);
    writeFileSync(join(uploads, 'pasted.txt'), 'pasted\n');
    const own = [`grep -q pasted ${join(uploads, 'pasted.txt')}`, 'echo node_modules/ > .gitignore && git add -A && git commit -qm own-work', 'npm test --silent', 'npm install --offline --no-audit --no-fund ./dep >/dev/null', 'git add -A && git commit -qm installed'];
    expect(await typedAll(dir, home, id, own)).toEqual([0, 0, 0, 0, 0]);
    expect(git(dir, 'log', '-2', '--format=%s', `trellis/${id}`).trim().split('\n')).toEqual(['installed', 'own-work']);
    // Measured from outside by a person, its checks run in its sandbox: the script ran (pass), its writes did not.
    const checkRun = await trellis(dir, ['session', 'check', id, '--json']);
    if (!checkRun.stdout) throw new Error(checkRun.stderr);
    const measured = JSON.parse(checkRun.stdout);
    expect(measured.readings).toContainEqual(expect.objectContaining({ scenario: 'cart/script', outcome: 'pass' }));
    expect([existsSync(join(dir, 'planted-by-check.txt')), git(dir, 'for-each-ref', 'refs/trellis/forged')]).toEqual([false, '']);
    expect(existsSync(join(view.worktree, 'node_modules', 'dep', 'package.json'))).toBe(true);
  });
});

/** A PATH with every program of /usr/bin but bubblewrap (/bin is /usr/bin on Debian, so it is left out). */
function pathWithoutBwrap(under: string): string {
  const bin = join(under, 'bin-without-bwrap');
  mkdirSync(bin, { recursive: true });
  for (const name of readdirSync('/usr/bin')) if (name !== 'bwrap') symlinkSync(join('/usr/bin', name), join(bin, name));
  return [bin, ...(process.env.PATH ?? '').split(':').filter((d) => d !== '/usr/bin' && d !== '/bin' && !existsSync(join(d, 'bwrap')))].join(':');
}

describe('confinement is visible, never silent', () => {
  it('without bubblewrap a spawn is refused with its repair and nothing is made; with sessions.confine "off" it runs, and its view, list and inbox say unconfined and why', async () => {
    const { dir, home } = project();
    const env = { PATH: pathWithoutBwrap(home) };
    const refused = await trellis(dir, ['session', 'spawn', 'work', '--harness', 'shell'], { env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('a shell session runs confined by bubblewrap, and bubblewrap (bwrap) is not on PATH');
    expect(refused.stderr).toContain('apt-get install bubblewrap');
    expect(refused.stderr).toContain('"sessions": { "confine": "off" } in trellis.json');
    expect(JSON.parse(await ok(dir, ['session', 'ls', '--all', '--json']))).toEqual([]);
    expect(existsSync(join(home, 'worktrees'))).toBe(false);

    writeFileSync(join(dir, 'trellis.local.json'), JSON.stringify({ sessions: { minFreeMb: 0, pool: 0, confine: 'off' } }));
    const spawned = JSON.parse(await ok(dir, ['session', 'spawn', 'work', '--harness', 'shell', '--json'], { env }));
    const why = 'sessions.confine is "off" in the project\'s config (trellis.json or trellis.local.json)';
    expect(spawned).toMatchObject({ state: 'running', confinement: { confined: false, why } });
    expect(await ok(dir, ['session', 'show', spawned.id])).toContain(`unconfined: ${why}`);
    expect(await ok(dir, ['session', 'ls'])).toContain('(unconfined)');
    // Unconfined, its shell writes outside its worktree: the setting says what it means.
    expect(await typed(dir, home, spawned.id, `echo planted > ${join(dir, 'planted.txt')}`)).toBe(0);
    expect(existsSync(join(dir, 'planted.txt'))).toBe(true);
    // The inbox (a quarantined session waits on a person) says it too, from the same list the page reads.
    await ok(dir, ['session', 'quarantine', spawned.id]);
    const listed = JSON.parse(await ok(dir, ['session', 'ls', '--json']));
    expect(inboxOf(listed)).toEqual([expect.objectContaining({ session: spawned.id, waitsFor: 'quarantined: manual', confinement: `unconfined: ${why}` })]);
  });
});

describe('a checkout inside the Trellis home (the demo the serve makes at <home>/demo/…)', () => {
  it('the sandbox starts: its worktree commits on its branch, the checkout and the home stay read-only (before: bwrap could not make the object store\'s mount point in the home\'s read-only tmpfs, and the pane died at once)', () => {
    const home = tempDir();
    const main = join(home, 'demo', 'shop');
    const worktree = join(home, 'worktrees', 'shop', 's1');
    mkdirSync(main, { recursive: true });
    git(main, 'init', '-q');
    git(main, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'root');
    git(main, 'worktree', 'add', '-q', worktree, '-b', 'trellis/s1');
    const argv = sandboxArgv(process.env, { worktree, mainRoot: main, trellisHome: home, home: process.env.HOME, branch: 'trellis/s1', uploads: join(home, 'uploads') });
    const script = `git -c user.name=t -c user.email=t@t commit -q --allow-empty -m own && echo committed; touch ${home}/x 2>/dev/null || echo home-ro; touch ${main}/y 2>/dev/null || echo main-ro`;
    const out = execFileSync(argv[0]!, [...argv.slice(1), '/bin/sh', '-c', script], { cwd: worktree, encoding: 'utf8' });
    expect(out.trim().split('\n')).toEqual(['committed', 'home-ro', 'main-ro']);
    expect(git(main, 'log', '-1', '--format=%s', 'trellis/s1').trim()).toBe('own');
  });
});
