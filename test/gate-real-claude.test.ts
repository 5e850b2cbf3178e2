import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentTestBed } from './helpers/agents.js';
import { git, ok, trellis } from './helpers/repo.js';
import { waitFor } from './helpers/sessions.js';

/*
 * The merge gate with the real Claude Code (pinned) against the local fake model: the agent itself
 * rewrites the check it is judged by and breaks the behaviour (a Bash tool call the fake model scripts),
 * and cannot let its own work through; a person can, and the merge then goes to the agent as a prompt.
 */

const bed = agentTestBed();
const AGENT_MS = 45_000;

describe('the real claude cannot write its own verdict', () => {
  it('its rewritten check reads changed; its own override is refused; a person’s is logged and the merge is dispatched', async () => {
    const p = bed.project();
    mkdirSync(join(p.dir, 'specs/shop'), { recursive: true });
    writeFileSync(join(p.dir, 'specs/shop/cart.md'), '---\nscenarios:\n  - { id: cart/total, run: "grep -q total=42 cart.txt" }\n---\n# Cart\n');
    writeFileSync(join(p.dir, 'cart.txt'), 'total=42\n');
    git(p.dir, 'add', '-A');
    git(p.dir, 'commit', '-qm', 'cart');
    const cli = (args: string[], env: NodeJS.ProcessEnv = {}) => trellis(p.dir, args, { env: { ...p.env, ...env } });
    await ok(p.dir, ['eval', 'run', '--by', 'ci'], { env: p.env });
    const rewrite = 'sed -i s/total=42/total=41/ cart.txt && sed -i s/grep.-q.total=42.cart.txt/true/ specs/shop/cart.md && git commit -qam rewrite';
    const id = JSON.parse(await ok(p.dir, ['session', 'spawn', `Simplify the cart [fake:bash ${rewrite}]`, '--harness', 'claude', '--node', 'shop/cart', '--json'], { env: p.env })).id as string;
    await waitFor('awaiting{permission}', async () => (await p.show(id)).reason === 'permission', AGENT_MS);
    // A person lets the tool call run; the agent commits on its branch.
    await ok(p.dir, ['session', 'keys', id, 'Enter'], { env: p.env });
    await waitFor('the agent’s commit', () => git(p.dir, 'log', '-1', '--format=%s', `trellis/${id}`).trim() === 'rewrite', AGENT_MS);
    await waitFor('its turn to end', async () => (await p.show(id)).reason === 'turn-end', AGENT_MS);

    const check = await cli(['session', 'check', id, '--json']);
    expect(check.code).toBe(1);
    const c = JSON.parse(check.stdout).checks.checks[0];
    expect(c).toMatchObject({ scenario: 'cart/total', verdict: 'changed', head: { outcome: 'fail' }, changed: { fixed: { run: 'grep -q total=42 cart.txt' }, now: { run: 'true' }, headNow: { outcome: 'pass' } } });
    await ok(p.dir, ['session', 'review', id], { env: p.env });

    // From inside the session (its TRELLIS_SESSION), under any name: refused, nothing logged.
    for (const args of [['session', 'merge', id, '--override', 'mine passes'], ['session', 'accept', id, '--reason', 'mine passes', '--by', 'ana']]) {
      const self = await cli(args, { TRELLIS_SESSION: id });
      expect(self.code).toBe(1);
      expect(self.stderr).toContain(`it was asked from inside session ${id} (TRELLIS_SESSION=${id})`);
    }
    expect(p.log(id).join('\n')).not.toMatch(/overridden|accepted/);
    const blocked = await cli(['session', 'merge', id]);
    expect(blocked.stderr).toContain('cart/total (changed: the branch redefined the check fixed at dispatch');

    // A person overrides, saying why: logged, and the merge goes to the agent as a prompt.
    const merged = JSON.parse((await ok(p.dir, ['session', 'merge', id, '--override', 'the total changes on purpose', '--by', 'ana', '--json'], { env: p.env })));
    expect(merged).toMatchObject({ dispatched: true, gate: { through: 'overridden', scenarios: ['cart/total'] } });
    expect(p.log(id)).toContain('merge gate overridden by ana for cart/total: the total changes on purpose');
    expect((await p.show(id)).state).toBe('merging');
  });
});
