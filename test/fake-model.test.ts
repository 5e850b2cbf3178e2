import { describe, expect, it } from 'vitest';
import { agentTestBed, CLAUDE_VERSION, CLAUDE_VERSIONS, CODEX_VERSION, CODEX_VERSIONS } from './helpers/agents.js';
import { waitFor } from './helpers/sessions.js';
import { execFileSync } from 'node:child_process';

const bed = agentTestBed();

describe('the fake model API drives the real agent programs', () => {
  it('the pinned versions are the ones installed', () => {
    const p = bed.project();
    expect(execFileSync('claude', ['--version'], { env: p.env, encoding: 'utf8' })).toContain(CLAUDE_VERSION);
    expect(execFileSync('codex', ['--version'], { env: p.env, encoding: 'utf8' })).toContain(CODEX_VERSION);
    // Each version of the matrix is the `claude` on PATH of a project made for it.
    for (const v of CLAUDE_VERSIONS) expect(execFileSync('claude', ['--version'], { env: bed.project({ claudeVersion: v }).env, encoding: 'utf8' })).toBe(`${v} (Claude Code)\n`);
    for (const v of CODEX_VERSIONS) expect(execFileSync('codex', ['--version'], { env: bed.project({ codexVersion: v }).env, encoding: 'utf8' })).toBe(`codex-cli ${v}\n`);
  });

  it('a real claude and a real codex each complete one scripted turn in a Trellis session', async () => {
    const p = bed.project();
    const before = bed.fake.turns().length;
    bed.fake.script({ text: 'First scripted answer' }, { text: 'Second scripted answer' });
    const claude = await p.spawn('Say hello for the harness test', 'claude');
    await waitFor('claude’s reply on screen', () => /First scripted answer/.test(p.screen(claude)), 45_000);
    const codex = await p.spawn('Say hello for codex', 'codex');
    await waitFor('codex’s reply on screen', () => /Second scripted answer/.test(p.screen(codex)), 45_000);

    const turns = bed.fake.turns().slice(before);
    expect(turns.map((t) => [t.api, t.userText])).toEqual([
      ['anthropic', 'Say hello for the harness test'],
      ['openai', 'Say hello for codex'],
    ]);
    // Both agents' own signals reach Trellis: the turn ends in awaiting{turn-end}, from claude's hook and
    // from Codex's app-server (its default channel).
    await waitFor('claude’s turn to end', async () => (await p.show(claude)).state === 'awaiting', 20_000);
    await waitFor('codex’s turn to end', async () => (await p.show(codex)).state === 'awaiting', 20_000);
    expect(await p.show(claude)).toMatchObject({ state: 'awaiting', reason: 'turn-end', source: 'hook' });
    expect(await p.show(codex)).toMatchObject({ state: 'awaiting', reason: 'turn-end', source: 'protocol', channel: 'protocol' });
  });
});

describe('scripted turns the agents ask about', () => {
  it('a Bash call asks claude’s and codex’s permission; a 401 shows as claude’s login error', async () => {
    const p = bed.project();
    bed.fake.script({ tool: 'bash', command: 'touch claude-was-here' }, { tool: 'bash', command: 'touch codex-was-here' }, { status: 401 });
    const claude = await p.spawn('Touch a file', 'claude');
    await waitFor('claude’s permission dialog', () => /Do you want to proceed\?/.test(p.screen(claude)), 45_000);
    const codex = await p.spawn('Touch a file too', 'codex');
    await waitFor('codex’s approval dialog', () => /Would you like to run the following command\?/.test(p.screen(codex)), 45_000);
    const denied = await p.spawn('Anything', 'claude');
    await waitFor('claude’s login error', () => /Invalid API key/.test(p.screen(denied)), 45_000);
  });
});
