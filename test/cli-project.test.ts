import { existsSync, readFileSync, utimesSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, cleanupRepos, git, ok, shell, tempDir, tempRepo, trellis } from './helpers/repo.js';
import { demoRepo } from './helpers/server.js';

afterAll(cleanupRepos);

describe('trellis init', () => {
  it('refuses a folder that is not a git repository unless --git is given', async () => {
    const dir = tempDir();
    const refused = await trellis(dir, ['init']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/not a git repository; run 'trellis init --git'/);
    expect(existsSync(join(dir, 'trellis.json'))).toBe(false);

    expect(await ok(dir, ['init', '--git'])).toMatch(/created a git repository/);
    expect(existsSync(join(dir, '.git'))).toBe(true);
  });

  it('writes trellis.json, a first node and the .gitignore line once; a second run changes nothing', async () => {
    const dir = tempRepo();
    writeFileSync(join(dir, '.gitignore'), 'node_modules/');
    const first = await ok(dir, ['init', '--harness', 'claude']);
    // What is not committed yet is said with the commands that commit it (a session starts from trunk).
    const uncommitted = "not committed yet: trellis.json, specs, .gitignore (sessions start from trunk's last commit and would not see them); commit them:\n  git add trellis.json specs .gitignore && git commit -m 'Set up Trellis'\n";
    expect(first).toBe(`wrote trellis.json\nwrote specs/index.md, a first node\nadded trellis.local.json to .gitignore\n${uncommitted}`);
    expect(JSON.parse(readFileSync(join(dir, 'trellis.json'), 'utf8'))).toEqual({ specRoot: 'specs', harness: 'claude' });
    expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toBe('node_modules/\ntrellis.local.json\n');
    const snapshot = () => ['trellis.json', '.gitignore', 'specs/index.md'].map((f) => readFileSync(join(dir, f), 'utf8'));
    const before = snapshot();
    expect(await ok(dir, ['init', '--harness', 'claude'])).toMatch(/already a Trellis project; nothing to do/);
    expect(snapshot()).toEqual(before);
    expect(await ok(dir, ['init', '--harness', 'codex'])).toBe(
      `recorded harness 'codex' in trellis.json\ndid not write specs/index.md: specs/ already holds 1 spec node\nkept .gitignore as it is (it ignores trellis.local.json)\n${uncommitted}`,
    );
    expect(JSON.parse(readFileSync(join(dir, 'trellis.json'), 'utf8')).harness).toBe('codex');
    expect(await ok(dir, ['doctor'])).toMatch(/^ok {5}git repository/);
  });
});

describe('trellis init in a folder that has spec nodes', () => {
  it('says what it created and what it did not: no specs/index.md, because nodes exist', async () => {
    const dir = tempRepo();
    mkdirSync(join(dir, 'specs/shop'), { recursive: true });
    writeFileSync(join(dir, 'specs/shop.md'), '# Shop\n');
    writeFileSync(join(dir, 'specs/shop/cart.md'), '# Cart\n');
    const said = await ok(dir, ['init']);
    expect(said).toBe(
      "wrote trellis.json\nadded trellis.local.json to .gitignore\ndid not write specs/index.md: specs/ already holds 2 spec nodes\nnot committed yet: trellis.json, specs, .gitignore (sessions start from trunk's last commit and would not see them); commit them:\n  git add trellis.json specs .gitignore && git commit -m 'Set up Trellis'\n",
    );
    expect(existsSync(join(dir, 'specs/index.md'))).toBe(false);
  });
});

describe('trellis doctor', () => {
  it('finds what is wrong, names each repair, and exits non-zero', async () => {
    const dir = await demoRepo();
    expect((await trellis(dir, ['doctor'])).code).toBe(0);
    writeFileSync(join(dir, 'specs/ops/broken.md'), '---\ntitle: [x\n---\n');
    writeFileSync(join(dir, '.gitignore'), '');
    writeFileSync(join(dir, 'trellis.local.json'), '{}');
    const lock = join(dir, '.git/refs/trellis/issues/srch4nothing.lock');
    writeFileSync(lock, '');
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(lock, old, old);
    const r = await trellis(dir, ['doctor', '--json']);
    expect(r.code).toBe(1);
    const errors = JSON.parse(r.stdout).filter((f: { level: string }) => f.level === 'error');
    expect(errors).toEqual([
      { level: 'error', what: expect.stringContaining('trellis.local.json is not ignored'), repair: "add 'trellis.local.json' to .gitignore" },
      { level: 'error', what: expect.stringMatching(/^specs\/ops\/broken\.md: front matter:/), repair: 'fix the front matter of specs/ops/broken.md' },
      { level: 'error', what: expect.stringContaining(`stale lock ${lock}`), repair: `if no trellis or git process is writing, rm '${lock}'` },
    ]);
  });

  it('reports an unreadable thread and a projection cache it cannot trust', async () => {
    const dir = await demoRepo();
    const blob = shell(dir, `printf 'not json' | git hash-object -w --stdin`).trim();
    const tree = shell(dir, `printf '100644 blob ${blob}\\tevent.json\\n' | git mktree`).trim();
    const commit = git(dir, 'commit-tree', tree, '-p', 'refs/trellis/issues/currencyq001', '-m', 'garbage').trim();
    git(dir, 'update-ref', 'refs/trellis/issues/currencyq001', commit);
    const r = await trellis(dir, ['doctor']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`error  thread currencyq001 is unreadable at ${commit}`);
    expect(r.stdout).toContain('repair: inspect with \'git log refs/trellis/issues/currencyq001\'');
  });
});

describe('trellis doctor on many loose refs', () => {
  it('suggests packing them, and is satisfied once they are packed', async () => {
    const dir = tempRepo();
    const id = (await ok(dir, ['issue', 'open', 'one of many'])).trim();
    const refs = join(dir, '.git/refs/trellis/issues');
    const tip = readFileSync(join(refs, id), 'utf8');
    for (let i = 0; i < 5_001; i++) writeFileSync(join(refs, `copy${i}`), tip);
    const warned = JSON.parse((await trellis(dir, ['doctor', '--json'])).stdout);
    expect(warned).toContainEqual({ level: 'warn', what: expect.stringContaining('5002 issue refs are loose files'), repair: expect.stringContaining('git pack-refs --all') });
    git(dir, 'pack-refs', '--all');
    const after = JSON.parse((await trellis(dir, ['doctor', '--json'])).stdout);
    expect(after.some((f: { what: string }) => f.what.includes('loose files'))).toBe(false);
  });
});

describe('trellis board and graph', () => {
  it('board prints a readable tree; graph --json flushes whole into a pipe', async () => {
    const dir = await demoRepo();
    const board = await ok(dir, ['board']);
    expect(board.split('\n')[0]).toBe('specs/  20 nodes · 4 open of 5 issues · 5 replies · latest 2026-02-02T11:30:00.000Z');
    expect(board).toContain('│  └─ search  Search  [review]  ●1 open');
    // enough nodes for a board well past a pipe buffer
    mkdirSync(join(dir, 'specs/bulk'));
    for (let i = 0; i < 400; i++) writeFileSync(join(dir, `specs/bulk/n${i}.md`), `---\ntitle: Node ${i} ${'x'.repeat(200)}\n---\n`);
    const parsed = JSON.parse(shell(dir, `node '${BIN}' graph --json | node -e "let t='';process.stdin.on('data',d=>t+=d).on('end',()=>console.log(JSON.stringify({n:JSON.parse(t).nodes.length,bytes:t.length})))"`));
    expect(parsed.n).toBe(420);
    expect(parsed.bytes).toBeGreaterThan(64 * 1024);
  });
});
