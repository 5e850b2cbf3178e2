import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cleanupRepos, git, ok, tempRepo, testEnv, trellis } from './helpers/repo.js';
import { post, serveDir } from './helpers/server.js';
import { killTmux, waitFor } from './helpers/sessions.js';

/*
 * The merge gate cannot be fooled (issue 29, DESIGN.md §14): each way it was fooled, as a row, through
 * the CLI and the API, with real shell sessions in real tmux over real git. Before the fix: the rewritten
 * check read `pass`, the stale trunk read `still failing`, the required check let the merge through, and
 * the session's own override was logged.
 */

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) killTmux(h);
});
afterAll(() => cleanupRepos());

const SPEC = '---\nscenarios:\n  - { id: cart/total, run: "grep -q total=42 cart.txt" }\n  - { id: cart/tax, run: "grep -q tax=ok cart.txt" }\n---\n# Cart\n';

/** A project whose node shop/cart declares two scenarios over cart.txt. */
function project(cart: string): string {
  const dir = tempRepo();
  homes.push(testEnv(dir).TRELLIS_HOME!);
  mkdirSync(join(dir, 'specs/shop'), { recursive: true });
  writeFileSync(join(dir, 'specs/shop/cart.md'), SPEC);
  writeFileSync(join(dir, 'cart.txt'), cart);
  git(dir, 'add', '-A');
  // Untracked, local: the queue never holds a session back on a loaded machine.
  writeFileSync(join(dir, 'trellis.local.json'), JSON.stringify({ sessions: { minFreeMb: 0, max: 8 } }));
  git(dir, 'commit', '-qm', 'cart');
  return dir;
}

type Check = { scenario: string; verdict: string; blocks: string | null; head: { outcome: string; run?: string } | null; changed: { fixed: { run: string }; now: { run: string | null }; headNow: { outcome: string } | null } | null };
const review = async (dir: string, id: string) => JSON.parse(await ok(dir, ['review', id, '--json'])) as { head: string; preflight: { ready: boolean; checks: string }; checks: { checks: Check[]; overrides: { by: string }[] } };
const check = async (dir: string, id: string, scenario: string) => (await review(dir, id)).checks.checks.find((c) => c.scenario === scenario)!;
const spawn = async (dir: string, args: string[]) => (await ok(dir, ['session', 'spawn', 'work', '--harness', 'shell', ...args])).trim();
/** What the session's own agent runs: the CLI with its TRELLIS_SESSION. */
const asSession = (dir: string, id: string, args: string[]) => trellis(dir, args, { env: { TRELLIS_SESSION: id } });

/** Types a command into the session's shell (as its agent would) and waits for the commit it makes on the session's branch. */
async function commitIn(dir: string, id: string, command: string, subject: string): Promise<string> {
  await ok(dir, ['session', 'prompt', id, '--body', command]);
  await waitFor(`the session to commit '${subject}'`, () => git(dir, 'log', '-1', '--format=%s', `trellis/${id}`).trim() === subject);
  return git(dir, 'rev-parse', `trellis/${id}`).trim();
}

/** The in-process server, on the test's own tmux socket (its runtime reads TRELLIS_HOME from this process). */
async function withApi<T>(dir: string, body: (api: Awaited<ReturnType<typeof serveDir>>) => Promise<T>): Promise<T> {
  const saved = process.env.TRELLIS_HOME;
  process.env.TRELLIS_HOME = testEnv(dir).TRELLIS_HOME!;
  const api = await serveDir(dir);
  try {
    return await body(api);
  } finally {
    await api.close();
    if (saved === undefined) delete process.env.TRELLIS_HOME;
    else process.env.TRELLIS_HOME = saved;
  }
}

describe('the merge gate cannot be fooled', () => {
  let dir = '';

  it('a branch that rewrites its own check to `true` and breaks the behaviour is changed, not ready; only a person accepts the new definition', async () => {
    dir = project('total=42\ntax=ok\n');
    await ok(dir, ['eval', 'run', '--by', 'ci']);
    const id = await spawn(dir, ['--node', 'shop/cart']);
    // The checks were fixed at dispatch, on the session's log.
    expect(git(dir, 'log', '--format=%s', `refs/trellis/sessions/${id}`)).toMatch(/^checks fixed at [0-9a-f]{12}: 2 declared scenario\(s\)$/m);
    const head = await commitIn(dir, id, 'sed -i s/total=42/total=41/ cart.txt && sed -i s/grep.-q.total=42.cart.txt/true/ specs/shop/cart.md && git commit -qam rewrite', 'rewrite');
    // The agent measures its own (rewritten) definition: a pass at its head, which the gate does not count.
    const own = JSON.parse((await asSession(dir, id, ['eval', 'run', 'cart/total', '--scope', id, '--json'])).stdout);
    expect(own).toEqual([expect.objectContaining({ outcome: 'pass', run: 'true', commit: head })]);
    expect(await check(dir, id, 'cart/total')).toMatchObject({ verdict: 'changed', head: null });

    const run = await trellis(dir, ['session', 'check', id]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('changed        cart/total  here fail');
    expect(run.stdout).toContain('fixed at dispatch: grep -q total=42 cart.txt → fail');
    expect(run.stdout).toContain("the branch's:      true → pass");
    const c = await check(dir, id, 'cart/total');
    expect(c).toMatchObject({ verdict: 'changed', head: { outcome: 'fail', run: 'grep -q total=42 cart.txt' }, changed: { fixed: { run: 'grep -q total=42 cart.txt' }, now: { run: 'true' }, headNow: { outcome: 'pass' } } });
    expect(c.blocks).toMatch(/^changed: the branch redefined the check fixed at dispatch/);
    expect((await review(dir, id)).preflight).toMatchObject({ ready: false, checks: expect.stringContaining('changed since dispatch: cart/total') });
    await ok(dir, ['session', 'review', id]);

    await withApi(dir, async (api) => {
      const refused = await api.get(`/api/sessions/${id}/merge`, post({}));
      expect(refused.status).toBe(409);
      expect((await refused.json()).error.message).toContain('cart/total (changed: the branch redefined the check fixed at dispatch');
      // The session's own acceptance: by its identity, or signed with a person's name from inside it.
      for (const [init, what] of [
        [post({ reason: 'mine is right', by: id }), `as session ${id}`],
        [{ ...post({ reason: 'mine is right', by: 'ana' }), headers: { 'content-type': 'application/json', 'trellis-session': id } }, `from inside session ${id}`],
      ] as const) {
        const self = await api.get(`/api/sessions/${id}/accept`, init);
        expect(self.status).toBe(403);
        const body = await self.json();
        expect(body.error.code).toBe('SELF_APPROVAL');
        expect(body.error.message).toContain(what);
      }
    });
    const cliSelf = await asSession(dir, id, ['session', 'accept', id, '--reason', 'mine is right', '--by', 'ana']);
    expect(cliSelf.code).not.toBe(0);
    expect(cliSelf.stderr).toContain(`accepting ${id}'s changed checks refused: it was asked from inside session ${id} (TRELLIS_SESSION=${id})`);
    expect(git(dir, 'log', '--format=%s', `refs/trellis/sessions/${id}`)).not.toContain('accepted');

    // A person accepts, saying why: logged on the session; the gate then runs the accepted definition.
    await ok(dir, ['session', 'accept', id, '--reason', 'the total moved to 41 on purpose', '--by', 'ana']);
    expect(git(dir, 'log', '--format=%an|%s', `refs/trellis/sessions/${id}`)).toContain('ana|changed check accepted by ana for cart/total (run: true): the total moved to 41 on purpose');
    expect(await check(dir, id, 'cart/total')).toMatchObject({ verdict: 'pass', blocks: null, changed: { accepted: { by: 'ana' } } });
  });

  it('trunk’s latest reading is an old fail, trunk was fixed since: session check measures trunk at its tip, and the break reads regressed', async () => {
    dir = project('total=41\ntax=ok\n');
    const old = git(dir, 'rev-parse', 'HEAD').trim();
    await ok(dir, ['eval', 'run', '--by', 'ci']);
    writeFileSync(join(dir, 'cart.txt'), 'total=42\ntax=ok\n');
    git(dir, 'commit', '-qam', 'fix the total');
    const tip = git(dir, 'rev-parse', 'HEAD').trim();
    const id = await spawn(dir, ['--node', 'shop/cart']);
    await commitIn(dir, id, 'sed -i s/total=42/total=40/ cart.txt && git commit -qam break', 'break');
    // Measured at the head, but trunk only at an old commit: never still failing, never ready.
    await ok(dir, ['eval', 'run', '--scope', id, '--by', 'ci']);
    const stale = await check(dir, id, 'cart/total');
    expect(stale).toMatchObject({ verdict: 'unmeasured', head: { outcome: 'fail' } });
    expect(stale.blocks).toBe(`trunk not measured at its tip ${tip.slice(0, 12)} (its latest reading is at ${old.slice(0, 12)})`);
    // The session files a trunk fail at the tip itself, to make its break read still failing: no baseline.
    await asSession(dir, id, ['eval', 'record', 'cart/total', '--outcome', 'fail']);
    expect(await check(dir, id, 'cart/total')).toMatchObject({ verdict: 'unmeasured', blocks: `trunk not measured at its tip ${tip.slice(0, 12)} by Trellis (its reading there was filed from outside)` });

    const r = JSON.parse((await trellis(dir, ['session', 'check', id, '--json'])).stdout);
    expect(r.trunk.map((x: { scenario: string; scope: string; commit: string; outcome: string }) => [x.scenario, x.scope, x.commit, x.outcome])).toEqual([
      ['cart/tax', 'trunk', tip, 'pass'],
      ['cart/total', 'trunk', tip, 'pass'],
    ]);
    expect(r.checks.checks.map((c: Check) => [c.scenario, c.verdict])).toEqual([
      ['cart/tax', 'pass'],
      ['cart/total', 'regressed'],
    ]);
    // The trunk measurement left no worktree behind.
    expect(git(dir, 'worktree', 'list', '--porcelain')).not.toContain('trellis-trunk-');
    await withApi(dir, async (api) => {
      const bundle = await (await api.get(`/api/sessions/${id}/review`)).json();
      expect(bundle.preflight.ready).toBe(false);
      expect(bundle.checks.checks.find((c: Check) => c.scenario === 'cart/total').verdict).toBe('regressed');
    });
  });

  it('a check the issue requires, still failing, blocks the merge; the issue as at spawn stands', async () => {
    dir = project('total=42\ntax=bad\n');
    await ok(dir, ['eval', 'run', '--by', 'ci']);
    const issue = (await ok(dir, ['issue', 'open', 'Tax is wrong', '--body', 'The tax line is off.', '--scenario-check', 'cart/tax'])).trim();
    const id = await spawn(dir, ['--issue', issue]);
    await commitIn(dir, id, 'echo notes > notes.txt && git add notes.txt && git commit -qm notes', 'notes');
    // The session rewrites its issue to drop the check: the issue as at spawn stands.
    await ok(dir, ['issue', 'edit', issue, '--body', 'Never mind the tax.'], { env: { TRELLIS_SESSION: id } });
    expect(JSON.parse(await ok(dir, ['issue', 'show', issue, '--json'])).body).not.toContain('checks:');
    const run = await trellis(dir, ['session', 'check', id]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('still failing  cart/tax  here fail · trunk fail  (issue, required');
    const c = await check(dir, id, 'cart/tax');
    expect(c.blocks).toMatch(/^required by the issue and fail at [0-9a-f]{12}$/);
    await ok(dir, ['session', 'review', id]);
    const merge = await trellis(dir, ['session', 'merge', id]);
    expect(merge.code).toBe(1);
    expect(merge.stderr).toMatch(/merge of \w+ refused by its checks: cart\/tax \(required by the issue and fail at/);
    await withApi(dir, async (api) => {
      const refused = await api.get(`/api/sessions/${id}/merge`, post({}));
      expect(refused.status).toBe(409);
      expect((await refused.json()).error.code).toBe('MERGE_BLOCKED');
    });
  });

  it('an override made with the session’s own identity is refused (CLI and API) and nothing is logged; a person’s is logged', async () => {
    dir = project('total=42\ntax=ok\n');
    await ok(dir, ['eval', 'run', '--by', 'ci']);
    const id = await spawn(dir, ['--node', 'shop/cart']);
    await commitIn(dir, id, 'sed -i s/total=42/total=40/ cart.txt && git commit -qam break', 'break');
    await ok(dir, ['session', 'check', id]).catch(() => undefined);
    await ok(dir, ['session', 'review', id]);
    expect((await check(dir, id, 'cart/total')).verdict).toBe('regressed');

    const cli = await asSession(dir, id, ['session', 'merge', id, '--override', 'trust me', '--by', 'ana']);
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toContain(`the override of ${id}'s merge gate refused: it was asked from inside session ${id}`);
    await withApi(dir, async (api) => {
      const byId = await api.get(`/api/sessions/${id}/merge/override`, post({ reason: 'trust me', by: id }));
      expect(byId.status).toBe(403);
      expect((await byId.json()).error.code).toBe('SELF_APPROVAL');
      const header = await api.get(`/api/sessions/${id}/merge/override`, { ...post({ reason: 'trust me' }), headers: { 'content-type': 'application/json', 'trellis-session': id } });
      expect(header.status).toBe(403);
    });
    expect(git(dir, 'log', '--format=%s', `refs/trellis/sessions/${id}`)).not.toContain('overridden');

    const person = await trellis(dir, ['session', 'merge', id, '--override', 'the total is rewritten next', '--by', 'ana']);
    expect(person.stderr).toContain('merge gate overridden for cart/total');
    expect(git(dir, 'log', '--format=%an|%s', `refs/trellis/sessions/${id}`)).toContain('ana|merge gate overridden by ana for cart/total: the total is rewritten next');
    expect((await review(dir, id)).checks.overrides).toEqual([expect.objectContaining({ by: 'ana' })]);
  });
});
