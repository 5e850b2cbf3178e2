import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cleanupRepos, git, ok, tempRepo, testEnv, trellis } from './helpers/repo.js';
import { post, serveDir } from './helpers/server.js';
import { killTmux, waitFor } from './helpers/sessions.js';

/*
 * A session's checks, end to end with real shell sessions (real tmux, real git): the scenarios that
 * concern it are measured in its worktree at its head commit, judged against trunk in its review, and
 * gate its merge.
 */

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) killTmux(h);
});
afterAll(() => cleanupRepos());

/** A project whose node shop/cart declares two scenarios over cart.txt: total passes on trunk, tax fails. */
function project(): string {
  const dir = tempRepo();
  homes.push(testEnv(dir).TRELLIS_HOME!);
  mkdirSync(join(dir, 'specs/shop'), { recursive: true });
  writeFileSync(
    join(dir, 'specs/shop/cart.md'),
    '---\nscenarios:\n  - { id: cart/total, run: "grep -q total=ok cart.txt" }\n  - { id: cart/tax, run: "grep -q tax=ok cart.txt" }\n---\n# Cart\n',
  );
  writeFileSync(join(dir, 'cart.txt'), 'total=ok\ntax=bad\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'cart');
  return dir;
}

const review = async (dir: string, id: string) => JSON.parse(await ok(dir, ['review', id, '--json']));
const verdicts = (r: { checks: { checks: { scenario: string; verdict: string; because: string[] }[] } }) => r.checks.checks.map((c) => [c.scenario, c.verdict, c.because.join('+')]);

/** Types a command into the session's shell and waits for the commit it makes on the session's branch. */
async function commitIn(dir: string, id: string, command: string, subject: string): Promise<string> {
  await ok(dir, ['session', 'prompt', id, '--body', command]);
  await waitFor(`the session to commit '${subject}'`, () => git(dir, 'log', '-1', '--format=%s', `trellis/${id}`).trim() === subject);
  return git(dir, 'rev-parse', `trellis/${id}`).trim();
}

describe('a session’s checks travel with its review and gate its merge', () => {
  it('a session that fixes its issue’s failing scenario shows fixed and merges; one that breaks a passing one is refused until measured again or overridden, which git log shows', async () => {
    const dir = project();
    const onTrunk = JSON.parse(await ok(dir, ['eval', 'run', '--json', '--by', 'ci']));
    expect(onTrunk.map((r: { scenario: string; outcome: string }) => [r.scenario, r.outcome])).toEqual([
      ['cart/total', 'pass'],
      ['cart/tax', 'fail'],
    ]);

    // An issue carries its acceptance; a session spawned for it, linked to no node, has it as its check.
    const issue = (await ok(dir, ['issue', 'open', 'Tax is wrong', '--body', 'The tax line is off.', '--scenario-check', 'cart/tax'])).trim();
    expect(JSON.parse(await ok(dir, ['issue', 'show', issue, '--json'])).body).toMatch(/^checks: cart\/tax$/m);
    const fixer = (await ok(dir, ['session', 'spawn', 'fix the tax', '--harness', 'shell', '--issue', issue])).trim();
    const fixed = await commitIn(dir, fixer, 'sed -i s/tax=bad/tax=ok/ cart.txt && git commit -qam fix-tax', 'fix-tax');

    // Not measured at its head yet: the pre-flight says what blocks it, and the merge is refused.
    let r = await review(dir, fixer);
    expect(verdicts(r)).toEqual([['cart/tax', 'unmeasured', 'issue']]);
    expect(r.preflight).toMatchObject({ ready: false, checks: `checks: blocked (not measured at the head commit: cart/tax); measure with 'trellis session check ${fixer}', or override: trellis session merge ${fixer} --override <reason>` });
    await ok(dir, ['session', 'review', fixer]);
    const early = await trellis(dir, ['session', 'merge', fixer]);
    expect(early.code).toBe(1);
    expect(early.stderr).toContain(`merge of ${fixer} refused by its checks: cart/tax (not measured at ${fixed.slice(0, 12)})`);
    expect(early.stderr).toContain(`trellis session check ${fixer}`);

    // Measured in its worktree at its head: fixed, ready.
    const checked = JSON.parse(await ok(dir, ['session', 'check', fixer, '--json']));
    expect(checked.readings).toEqual([expect.objectContaining({ scenario: 'cart/tax', scope: fixer, commit: fixed, outcome: 'pass' })]);
    r = await review(dir, fixer);
    expect(r.checks.checks[0]).toMatchObject({ scenario: 'cart/tax', verdict: 'fixed', head: { outcome: 'pass', commit: fixed }, trunk: { outcome: 'fail', scope: 'trunk' } });
    expect(r.preflight).toMatchObject({ ready: true, checks: 'checks: ready to merge (1 fixed)' });
    // The gate lets it through (whatever the harness then does with the merge) and nothing is overridden.
    const merged = await trellis(dir, ['session', 'merge', fixer]);
    expect(merged.stderr).not.toMatch(/refused by its checks|overridden/);
    git(dir, 'merge', '-q', '--no-edit', `trellis/${fixer}`);
    expect(readFileSync(join(dir, 'cart.txt'), 'utf8')).toBe('total=ok\ntax=ok\n');
    expect(git(dir, 'log', '--format=%s', `refs/trellis/sessions/${fixer}`)).not.toContain('overridden');

    // A session linked to the node breaks the passing scenario.
    await ok(dir, ['eval', 'run', '--by', 'ci']);
    const breaker = (await ok(dir, ['session', 'spawn', 'tidy the total', '--harness', 'shell', '--node', 'shop/cart'])).trim();
    await commitIn(dir, breaker, 'sed -i s/total=ok/total=bad/ cart.txt && git commit -qam break-total', 'break-total');
    // Uncommitted work is not what a head commit's reading measures: refused, naming it.
    writeFileSync(join(JSON.parse(await ok(dir, ['session', 'show', breaker, '--json'])).worktree, 'scratch.txt'), 'x\n');
    const dirty = await trellis(dir, ['session', 'check', breaker]);
    expect(dirty.code).toBe(1);
    expect(dirty.stderr).toContain('uncommitted changes (scratch.txt)');
    const head = await commitIn(dir, breaker, 'git add scratch.txt && git commit -qm scratch', 'scratch');
    const failing = await trellis(dir, ['session', 'check', breaker]);
    expect(failing.code).toBe(1);
    expect(failing.stdout).toContain('regressed      cart/total');
    r = await review(dir, breaker);
    expect(verdicts(r)).toEqual([
      ['cart/tax', 'pass', 'linked'],
      ['cart/total', 'regressed', 'linked'],
    ]);
    expect(r.preflight.ready).toBe(false);
    await ok(dir, ['session', 'review', breaker]);

    // Through the API: 409 naming the scenario and the command that measures it.
    // The in-process server's runtime reads TRELLIS_HOME from this process: the test's own tmux socket.
    const savedHome = process.env.TRELLIS_HOME;
    process.env.TRELLIS_HOME = testEnv(dir).TRELLIS_HOME!;
    const api = await serveDir(dir);
    try {
      const refused = await api.get(`/api/sessions/${breaker}/merge`, post({}));
      expect(refused.status).toBe(409);
      const body = await refused.json();
      expect(body.error.code).toBe('MERGE_BLOCKED');
      expect(body.error.message).toContain(`cart/total (regressed: passes on trunk, fail at ${head.slice(0, 12)})`);
      expect(body.error.message).toContain(`trellis session check ${breaker}`);
      // Beside the message, the facts a page says in its own words (issue 34): which checks, and why.
      expect(body).toMatchObject({ blocking: [{ scenario: 'cart/total', blocks: `regressed: passes on trunk, fail at ${head.slice(0, 12)}` }], changed: false });
      // An empty reason is no override.
      expect((await api.get(`/api/sessions/${breaker}/merge/override`, post({ reason: ' ' }))).status).toBe(409);
      // An override is the owner's route of its own (route table): the merge route refuses one, naming it.
      const asked = await api.get(`/api/sessions/${breaker}/merge`, post({ override: 'trust me' }));
      expect(asked.status).toBe(400);
      expect((await asked.json()).error.message).toContain(`POST /api/sessions/${breaker}/merge/override {reason}`);
    } finally {
      await api.close();
      if (savedHome === undefined) delete process.env.TRELLIS_HOME;
      else process.env.TRELLIS_HOME = savedHome;
    }
    // A new commit is not measured yet: still refused, now for that too.
    await commitIn(dir, breaker, 'echo more >> notes.txt && git add notes.txt && git commit -qm notes', 'notes');
    expect((await trellis(dir, ['session', 'merge', breaker])).stderr).toMatch(/cart\/tax \(not measured at [0-9a-f]{12}\); cart\/total \(not measured at/);

    // Overridden with a reason: through, and logged on the session (who, why, which scenarios).
    const over = await trellis(dir, ['session', 'merge', breaker, '--override', 'total is rewritten in the next session', '--by', 'ana']);
    expect(over.stderr).toContain('merge gate overridden for cart/tax, cart/total');
    expect(over.stderr).not.toContain('refused by its checks');
    expect(git(dir, 'log', '--format=%an|%s', `refs/trellis/sessions/${breaker}`)).toContain(
      'ana|merge gate overridden by ana for cart/tax, cart/total: total is rewritten in the next session',
    );
    r = await review(dir, breaker);
    expect(r.checks.overrides).toEqual([expect.objectContaining({ by: 'ana', reason: 'total is rewritten in the next session', scenarios: ['cart/tax', 'cart/total'] })]);
    expect(JSON.parse(await ok(dir, ['session', 'show', breaker, '--json'])).mergeOverrides).toHaveLength(1);
  });

  it('sessions.mergeGate "off" gates nothing; an unknown value is refused naming the choices', async () => {
    const dir = project();
    const id = (await ok(dir, ['session', 'spawn', 'look', '--harness', 'shell', '--node', 'shop/cart'])).trim();
    await ok(dir, ['session', 'review', id]);
    writeFileSync(join(dir, 'trellis.json'), JSON.stringify({ sessions: { mergeGate: 'nope' } }));
    const bad = await trellis(dir, ['review', id]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('"mergeGate"?: "checks" | "off"');
    writeFileSync(join(dir, 'trellis.json'), JSON.stringify({ sessions: { mergeGate: 'off' } }));
    const r = await review(dir, id);
    expect(r.checks).toMatchObject({ gate: 'off', ready: true, blocking: [] });
    expect(r.checks.checks.map((c: { verdict: string }) => c.verdict)).toEqual(['unmeasured', 'unmeasured']);
    expect((await trellis(dir, ['session', 'merge', id])).stderr).not.toContain('refused by its checks');
  });
});
