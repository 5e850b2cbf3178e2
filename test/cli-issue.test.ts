import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, cleanupRepos, fsck, git, ok, shell, tempDir, tempRepo, trellis } from './helpers/repo.js';

/** Spec node files (uncommitted: the main checkout's spec root is what an issue's nodes are checked against). */
function specNodes(dir: string, ...ids: string[]): void {
  for (const id of ids) {
    mkdirSync(dirname(join(dir, 'specs', `${id}.md`)), { recursive: true });
    writeFileSync(join(dir, 'specs', `${id}.md`), `# ${id}\n`);
  }
}

afterAll(cleanupRepos);

const statusOf = (dir: string) => git(dir, 'status', '--porcelain=v2', '--branch', '--untracked-files=all');

describe('trellis issue: the thread lifecycle through the real CLI', () => {
  it('open, reply, remark, resolve, retract, close — one readable commit per write, the work tree untouched', async () => {
    const dir = tempRepo();
    specNodes(dir, 'auth/login');
    writeFileSync(join(dir, 'notes.txt'), 'uncommitted work\n');
    git(dir, 'add', 'notes.txt');
    const before = statusOf(dir);
    const index = git(dir, 'ls-files', '--stage', '--debug');

    const id = (await ok(dir, ['issue', 'open', 'Login form forgets the email', '--node', 'auth/login', '--body', 'see [[auth/session]]'])).trim();
    expect(id).toMatch(/^[0-9a-z]{12}$/);
    expect(await ok(dir, ['issue', 'reply', id, '--body', 'reproduced', '--by', 's-42'])).toBe('1\n');
    expect(await ok(dir, ['issue', 'remark', id, '--reading', 'auth/login@abc', '--body', 'spec disagrees'])).toBe('2\n');
    expect(await ok(dir, ['issue', 'resolve', id, '2'])).toBe(`resolved reply 2 of ${id}\n`);
    expect(await ok(dir, ['issue', 'resolve', id, '2'])).toBe(`reply 2 of ${id} was already resolved\n`);
    expect(await ok(dir, ['issue', 'unresolve', id, '2'])).toBe(`unresolved reply 2 of ${id}\n`);
    expect(await ok(dir, ['issue', 'retract', id, '1'])).toBe(`retracted reply 1 of ${id}\n`);
    expect(await ok(dir, ['issue', 'close', id])).toBe(`${id} landed\n`);

    const issue = JSON.parse(await ok(dir, ['issue', 'show', id, '--json']));
    expect(issue).toEqual({
      id,
      store: 'local',
      concern: 'Login form forgets the email',
      by: 'Test Author',
      status: 'landed',
      nodes: ['auth/login', 'auth/session'],
      created: expect.any(String),
      body: 'see [[auth/session]]',
      replies: [
        { by: 's-42', at: expect.any(String), body: 'reproduced', retracted: true },
        { by: 'Test Author', at: expect.any(String), body: 'spec disagrees', resolved: false, reading: 'auth/login@abc' },
      ],
      evidence: [],
      labels: [],
    });
    // Who opened and closed it, and when: the timeline's own read.
    expect(JSON.parse(await ok(dir, ['issue', 'timeline', id, '--json']))).toEqual({
      id,
      events: [
        { type: 'opened', by: 'Test Author', at: issue.created },
        { type: 'closed', by: 'Test Author', at: expect.any(String) },
      ],
      carried: {},
      notes: [],
    });
    expect(await ok(dir, ['issue', 'timeline', id])).toMatch(new RegExp(`^${issue.created}  Test Author  opened\n\\S+  Test Author  closed\n$`));

    expect(git(dir, 'log', '--format=%an|%s', `refs/trellis/issues/${id}`).trim().split('\n')).toEqual([
      'Test Author|close: landed',
      'Test Author|retract: reply 1',
      'Test Author|unresolve: reply 2',
      'Test Author|resolve: reply 2',
      'Test Author|remark on auth/login@abc: spec disagrees',
      's-42|reply: reproduced',
      'Test Author|open: Login form forgets the email',
    ]);
    expect(statusOf(dir)).toBe(before);
    expect(git(dir, 'ls-files', '--stage', '--debug')).toBe(index);
    expect(fsck(dir)).toBe('');
  });

  it('takes the author from --by, else TRELLIS_SESSION, else git user.name', async () => {
    const dir = tempRepo();
    const id = (await ok(dir, ['issue', 'open', 'who'], { env: { TRELLIS_SESSION: 's-9' } })).trim();
    await ok(dir, ['issue', 'reply', id, '--body', 'a'], { env: { TRELLIS_SESSION: 's-9' } });
    await ok(dir, ['issue', 'reply', id, '--body', 'b', '--by', 'explicit'], { env: { TRELLIS_SESSION: 's-9' } });
    await ok(dir, ['issue', 'reply', id, '--body', 'c']);
    const issue = JSON.parse(await ok(dir, ['issue', 'show', id, '--json']));
    expect([issue.by, ...issue.replies.map((r: { by: string }) => r.by)]).toEqual(['s-9', 's-9', 'explicit', 'Test Author']);
  });

  it('reads a body from a pipe, from a file, and from --body -', async () => {
    const dir = tempRepo();
    const id = (await ok(dir, ['issue', 'open', 'bodies'])).trim();
    shell(dir, `echo 'piped text' | node '${BIN}' issue reply ${id}`);
    writeFileSync(join(dir, 'body.md'), 'from a file\n');
    shell(dir, `node '${BIN}' issue reply ${id} < body.md`);
    await ok(dir, ['issue', 'reply', id, '--body', '-'], { input: 'dash stdin\n' });
    const issue = JSON.parse(await ok(dir, ['issue', 'show', id, '--json']));
    expect(issue.replies.map((r: { body: string }) => r.body)).toEqual(['piped text', 'from a file', 'dash stdin']);
  });

  it('lists open issues newest first, filters by node and store, --all adds landed ones', async () => {
    const dir = tempRepo();
    specNodes(dir, 'n1', 'n2');
    const a = (await ok(dir, ['issue', 'open', 'A', '--node', 'n1'])).trim();
    const b = (await ok(dir, ['issue', 'open', 'B', '--node', 'n2'])).trim();
    const c = (await ok(dir, ['issue', 'open', 'C', '--body', 'about [[n1]]'])).trim();
    await ok(dir, ['issue', 'open', 'eval drift', '--node', 'n1', '--scenario', 'login-retry']);
    await ok(dir, ['issue', 'close', b]);
    const ids = async (...args: string[]) => JSON.parse(await ok(dir, ['issue', 'ls', '--json', ...args])).map((i: { id: string }) => i.id);
    expect(await ids()).toEqual([c, a]);
    expect(await ids('--all')).toEqual([c, b, a]);
    expect(await ids('--node', 'n1')).toEqual([c, a]);
    expect(await ids('--node', 'n2', '--all')).toEqual([b]);
    expect(await ids('--store', 'local')).toEqual([c, a]);
    expect(JSON.parse(await ok(dir, ['issues', '--json'])).map((i: { id: string }) => i.id)).toEqual([c, b, a]);
    const human = await ok(dir, ['issue', 'ls']);
    expect(human.split('\n').filter(Boolean).map((l) => l.split(/\s+/)[0])).toEqual([c, a]);
    expect(human).toContain('C');
    expect(human).not.toContain('eval drift');
  });

  it('stores evidence, attaches it to a reply (deduped), and gets bytes back by range', async () => {
    const dir = tempRepo();
    const file = join(dir, 'shot.png');
    const bytes = Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 256));
    writeFileSync(file, bytes);
    const hash = (await ok(dir, ['evidence', 'put', file])).trim();
    expect(hash).toBe(createHash('sha256').update(bytes).digest('hex'));
    const id = (await ok(dir, ['issue', 'open', 'with evidence'])).trim();
    await ok(dir, ['issue', 'reply', id, '--body', 'see shot', '--evidence', hash, '--evidence', hash]);
    await ok(dir, ['issue', 'reply', id, '--body', 'again', '--evidence', hash]);
    expect(JSON.parse(await ok(dir, ['issue', 'show', id, '--json'])).evidence).toEqual([hash]);
    const r = await trellis(dir, ['evidence', 'get', hash, '--range', '10-19']);
    expect(r.code).toBe(0);
    expect(Buffer.from(r.stdout, 'latin1').length).toBe(10);
    expect(JSON.parse(await ok(dir, ['evidence', 'put', '-', '--json'], { input: 'abc' }))).toEqual({
      hash: createHash('sha256').update('abc').digest('hex'),
      size: 3,
    });
  });
});

describe('trellis: bad input', () => {
  const failsWith = async (dir: string, args: string[], code: number, stderr: RegExp) => {
    const r = await trellis(dir, args);
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code, stdout: '' });
    expect(r.stderr).toMatch(stderr);
    return r;
  };

  it('unknown ids exit 1 with one line on stderr', async () => {
    const dir = tempRepo();
    for (const args of [
      ['issue', 'show', 'nosuchthread'],
      ['issue', 'reply', 'nosuchthread', '--body', 'x'],
      ['issue', 'close', 'nosuchthread'],
      ['issue', 'show', '../../HEAD'],
      ['issue', 'show', 'github.com#12'],
    ]) {
      const r = await failsWith(dir, args, 1, /^trellis: no (such thread|issue)/);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
  });

  it('refused transitions and bad references exit 1 saying why', async () => {
    const dir = tempRepo();
    const id = (await ok(dir, ['issue', 'open', 'x'])).trim();
    await ok(dir, ['issue', 'reply', id, '--body', 'plain']);
    await failsWith(dir, ['issue', 'resolve', id, '1'], 1, /not a remark/);
    await failsWith(dir, ['issue', 'resolve', id, '7'], 1, /no reply 7/);
    await failsWith(dir, ['issue', 'reply', id, '--body', 'x', '--evidence', 'f'.repeat(64)], 1, /no evidence/);
    await failsWith(dir, ['issue', 'reply', id, '--body', 'x', '--evidence', 'nothex'], 1, /not an evidence hash/);
    await failsWith(dir, ['issue', 'open', 'x', '--node', '../up'], 1, /not a node id/);
    await failsWith(dir, ['issue', 'open', 'x', '--store', 'gitlab.com'], 1, /no store 'gitlab.com'/);
    await ok(dir, ['issue', 'close', id]);
    await failsWith(dir, ['issue', 'close', id], 1, /only an open thread closes/);
    const evalId = (await ok(dir, ['issue', 'open', 'drift', '--scenario', 's1'])).trim();
    await failsWith(dir, ['issue', 'show', evalId], 1, /no issue/);
  });

  it('missing or malformed arguments exit 2 with usage', async () => {
    const dir = tempRepo();
    const id = (await ok(dir, ['issue', 'open', 'x'])).trim();
    for (const [args, reason] of [
      [['issue', 'open'], /missing <concern>/],
      [['issue', 'reply'], /missing <id>/],
      [['issue', 'resolve', id], /missing <n>/],
      [['issue', 'resolve', id, 'two'], /whole number/],
      [['issue', 'resolve', id, '0'], /whole number/],
      [['issue', 'show', id, 'extra'], /unexpected 'extra'/],
      [['issue', 'close', id, '--reading', 'r'], /--reading does not apply/],
      [['issue', 'remark', id, '--body', 'x'], /needs --reading/],
      [['issue', 'frobnicate'], /unknown issue action/],
      [['issue', 'ls', '--bogus'], /unknown option '--bogus'/],
      [['issue', 'reply', id, '--body'], /--body needs a value|value is missing/],
      [['issues', '--all'], /unknown option|does not apply/],
      [['evidence', 'get'], /missing <hash>/],
      [['evidence', 'get', 'a'.repeat(64), '--range', 'x'], /--range takes/],
      [['nonsense'], /unknown command 'nonsense'/],
    ] as [string[], RegExp][]) {
      const r = await trellis(dir, args);
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr).toMatch(reason);
      expect(r.stderr).toMatch(/usage|--help/);
    }
  });

  it('outside a git repository, says so and how to repair it', async () => {
    const r = await trellis(tempDir(), ['issue', 'ls']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/not inside a git repository; run 'git init'/);
  });
});

