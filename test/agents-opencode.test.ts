import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentTestBed, type AgentProject } from './helpers/agents.js';
import { ok, trellis } from './helpers/repo.js';
import { tmux, waitFor } from './helpers/sessions.js';
import { OPENCODE_VERSION, opencodeBinDir, opencodeHome } from './fake-model/opencode.js';
import { opencodeAdapter } from '../src/store/sessions/agents/opencode/opencode.js';

/*
 * opencode 1.18.33, the real binary, against the fake model's Chat Completions: its status comes from its
 * own server (a loopback port and a password Trellis picks per launch), whose event stream a watcher reads.
 * Each scenario keeps the screen it asserts on under test-results/agents/ as evidence.
 */

const bed = agentTestBed();
const AGENT_WAIT = 90_000;
/** The scenario starts opencode three times (10-20 s each on a loaded 2-core machine) and runs a dozen turns. */
const TEST_MS = 420_000;
const EVIDENCE = join(process.cwd(), 'test-results', 'agents');

/** An agent project whose sessions can run opencode (on PATH, configured for the fake model, offline). */
function opencodeProject(): AgentProject {
  const p = bed.project();
  // The project's env is the one its verbs (and so the tmux server, and each agent) run with.
  Object.assign(p.env, opencodeHome(bed.fake.url, p.agent.home), { PATH: `${opencodeBinDir()}:${p.env.PATH}` });
  return p;
}

const spawn = async (p: AgentProject, task: string) => (JSON.parse(await ok(p.dir, ['session', 'spawn', task, '--harness', 'opencode', '--json'], { env: p.env })) as { id: string }).id;

type Tokens = { input: number; output: number; cacheRead: number; cacheWrite: number; responses: number };
/** What the fake answered to the conversations since answer `start` (its side calls, the titles, are no message of them). */
function fakeTotals(start: number): Tokens {
  const t = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, responses: 0 };
  for (const a of bed.fake.answered.slice(start).filter((x) => x.kind !== 'side')) {
    Object.assign(t, { input: t.input + a.input, output: t.output + a.output, cacheRead: t.cacheRead + a.cacheRead, cacheWrite: t.cacheWrite + a.cacheWrite, responses: t.responses + 1 });
  }
  return t;
}

/** The session's recorded usage totals, once they count as many responses as the fake answered since `start`. */
async function recordedOnce(p: AgentProject, id: string, start: number): Promise<Tokens> {
  const totals = async () => ((await p.show(id)).usage as { total?: Tokens }).total;
  await waitFor('its usage read from opencode’s server', async () => ((await totals())?.responses ?? 0) >= fakeTotals(start).responses, 10_000).catch(async (e: Error) => {
    throw new Error(`${e.message}: recorded ${JSON.stringify(await totals())}, the fake answered ${JSON.stringify(fakeTotals(start))}`);
  });
  const { input, output, cacheRead, cacheWrite, responses } = (await totals())!;
  return { input, output, cacheRead, cacheWrite, responses };
}

/** Keeps a screen as the scenario's evidence, and returns it. */
function keepScreen(p: AgentProject, id: string, name: string): string {
  const screen = p.screen(id);
  mkdirSync(EVIDENCE, { recursive: true });
  writeFileSync(join(EVIDENCE, `opencode-${OPENCODE_VERSION}-${name}.txt`), screen);
  return screen;
}

async function until(p: AgentProject, id: string, what: string, check: (s: Awaited<ReturnType<AgentProject['show']>>) => boolean): Promise<void> {
  try {
    await waitFor(what, async () => check(await p.show(id)), AGENT_WAIT);
  } catch (e) {
    const seen = bed.fake.requests.slice(-6).map((r) => `${r.kind} ${r.status} ${JSON.stringify(r.userText.slice(0, 40))}`);
    throw new Error(`${(e as Error).message}; log: ${p.log(id).join(' | ')}; the fake's last requests: ${seen.join(' | ')}; screen: ${p.screen(id)}`);
  }
}

describe('opencode, its status from its own server', () => {
  it('turn end, a permission approved and one denied by name through opencode’s API; the server takes only its password; a second session is its own conversation, resumed it continues it, three failed turns quarantine it', async () => {
    const p = opencodeProject();
    // What the session's launch asks for its log (the adapter's own command line) prints the pinned version.
    const [program, ...versionArgs] = opencodeAdapter.versionArgs!;
    expect(execFileSync(program!, versionArgs, { env: p.env, encoding: 'utf8' }).trim()).toBe(OPENCODE_VERSION);
    const start = bed.fake.answered.length;
    const id = await spawn(p, 'Say hello for opencode');
    await until(p, id, 'the first turn to end', (s) => s.state === 'awaiting' && s.reason === 'turn-end');
    expect(keepScreen(p, id, 'turn-end')).toContain('Fake reply to: Say hello for opencode');
    const shown = await p.show(id);
    expect(shown).toMatchObject({ source: 'hook' });
    expect(shown.agentSessionId).toMatch(/^ses_/);
    // The first turn ran before it ended: a stream that only said idle would skip `running`.
    const log = p.log(id);
    expect(log.findIndex((s) => s.startsWith('run '))).toBeLessThan(log.findIndex((s) => s.startsWith('await turn-end')));
    // Its usage, read from opencode's own server at the turn's end (through the sandbox's relay: it runs confined).
    expect(shown.confinement).toEqual({ confined: true, by: expect.stringMatching(/^bubblewrap /) });
    // Exactly the fake's answers to the conversation (not its title, a side call): distinct usage with cached
    // and reasoning tokens, a placeholder usage early in each stream.
    expect(await recordedOnce(p, id, start)).toEqual(fakeTotals(start));

    // A sub-agent (opencode's task tool) answers in a child session of its own: its usage counted once, beside the conversation's.
    const turnEnds = () => p.log(id).filter((l) => l.startsWith('await turn-end')).length;
    const ends = turnEnds();
    await ok(p.dir, ['session', 'prompt', id, '--body', 'Delegate it [fake:task Count the files]'], { env: p.env });
    await until(p, id, 'the delegating turn to end', (s) => s.state === 'awaiting' && s.reason === 'turn-end' && turnEnds() > ends);
    expect(bed.fake.turns().filter((r) => r.userText.includes('Count the files') && !r.userText.includes('[fake:task')).length).toBe(1);
    expect(await recordedOnce(p, id, start)).toEqual(fakeTotals(start));
    // Its prompt is the agent's, not a person's turn.
    expect(((await p.show(id)).usage as { turns: number }).turns).toBe(2);

    // Its server: on loopback, the password in no command line, and nothing answered without it.
    const files = readdirSync(join(p.home, 'opencode'));
    expect(files).toHaveLength(1);
    const endpoint = JSON.parse(readFileSync(join(p.home, 'opencode', files[0]!), 'utf8')) as { port: number; password: string };
    expect(tmux(p.home, 'list-panes', '-a', '-F', '#{pane_start_command}')).not.toContain(endpoint.password);
    expect((await fetch(`http://127.0.0.1:${endpoint.port}/session`)).status).toBe(401);
    const health = await fetch(`http://127.0.0.1:${endpoint.port}/global/health`, { headers: { authorization: `Basic ${Buffer.from(`opencode:${endpoint.password}`).toString('base64')}` } });
    expect(await health.json()).toMatchObject({ healthy: true, version: OPENCODE_VERSION });

    // A permission, approved by name.
    await ok(p.dir, ['session', 'prompt', id, '--body', 'Write it [fake:bash echo approved > approved.txt]'], { env: p.env });
    await until(p, id, 'the permission wait', (s) => s.state === 'awaiting' && s.reason === 'permission');
    expect((await p.show(id)).detail).toBe('bash: echo approved > approved.txt');
    await waitFor('the dialog on screen', () => /Permission required/.test(p.screen(id)), 10_000);
    expect(keepScreen(p, id, 'permission')).toMatch(/Allow once\s+Allow always\s+Reject/);
    // A choice the dialog does not offer is refused, naming those it does; nothing is answered.
    const wrong = await trellis(p.dir, ['session', 'answer', id, 'maybe'], { env: p.env });
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain('"Allow once", "Allow always", "Reject"');
    expect((await p.show(id)).reason).toBe('permission');
    expect(await ok(p.dir, ['session', 'answer', id, 'approve'], { env: p.env })).toContain('answered "Allow once"');
    await until(p, id, 'the approved turn to end', (s) => s.state === 'awaiting' && s.reason === 'turn-end');
    const worktree = (await p.show(id)).worktree;
    await waitFor('the file the approved command wrote', () => existsSync(join(worktree, 'approved.txt')), 10_000);

    // Another, denied by the name the screen shows.
    const before = bed.fake.requests.length;
    await ok(p.dir, ['session', 'prompt', id, '--body', 'Write it [fake:bash echo denied > denied.txt]'], { env: p.env });
    await until(p, id, 'the second permission wait', (s) => s.state === 'awaiting' && s.reason === 'permission');
    expect(await ok(p.dir, ['session', 'answer', id, 'Reject'], { env: p.env })).toContain('answered "Reject"');
    await until(p, id, 'the denied turn to end', (s) => s.state === 'awaiting' && s.reason === 'turn-end');
    keepScreen(p, id, 'denied');
    expect(existsSync(join(worktree, 'denied.txt'))).toBe(false);
    // Denied: the command never ran, and no tool output went back to the model as a success.
    expect(bed.fake.requests.slice(before).filter((r) => r.kind === 'turn').map((r) => r.userText)).toEqual(['Write it [fake:bash echo denied > denied.txt]']);
    // Every answer of the conversation so far (a tool call and its follow-up are two), each counted once.
    expect(fakeTotals(start).responses).toBeGreaterThanOrEqual(4);
    expect(await recordedOnce(p, id, start)).toEqual(fakeTotals(start));

    // A second session of the same repository: opencode lists the first one's conversation too (it keys
    // sessions by the repository), which must not be taken for the second's, nor end its turn early.
    await ok(p.dir, ['session', 'close', id], { env: p.env });
    // Its opencode gone, the watcher removes the password it opened.
    await waitFor('the closed session’s endpoint file to go', () => readdirSync(join(p.home, 'opencode')).length === 0, 10_000);
    // The second session is also the one resumed below: each opencode launch costs 10-20 s of a CPU-bound suite.
    bed.fake.script({ text: 'I will remember QUINCE' });
    const second = await spawn(p, 'Remember the word QUINCE');
    await until(p, second, 'the second session’s turn to end', (s) => s.state === 'awaiting' && s.reason === 'turn-end');
    const secondLog = p.log(second);
    expect(secondLog.filter((s) => s.startsWith('identify'))).toHaveLength(1);
    expect((await p.show(second)).agentSessionId).not.toBe(shown.agentSessionId);
    expect(secondLog.findIndex((s) => s.startsWith('run '))).toBeLessThan(secondLog.findIndex((s) => s.startsWith('await turn-end')));
    await resumeThenQuarantine(p, second);
  }, TEST_MS);
});

/** Resume continues the same opencode conversation, idle at its input; then three failed turns in a row quarantine it. */
async function resumeThenQuarantine(p: AgentProject, id: string): Promise<void> {
  const conversation = (await p.show(id)).agentSessionId;
  await ok(p.dir, ['session', 'interrupt', id], { env: p.env });
  await ok(p.dir, ['session', 'resume', id], { env: p.env });
  await until(p, id, 'the resumed opencode idle at its input', (s) => s.state === 'awaiting' && s.reason === 'turn-end' && s.agentSessionId === conversation);
  await waitFor('the resumed conversation on screen', () => /I will remember QUINCE/.test(p.screen(id)), 20_000).catch((e: Error) => {
    throw new Error(`${e.message}; log: ${p.log(id).join(' | ')}; screen: ${p.screen(id)}`);
  });
  keepScreen(p, id, 'resumed');
  // Two launches, two servers: the resumed one has a new port or password.
  expect(p.log(id).filter((s) => s.startsWith('launch'))).toHaveLength(2);
  bed.fake.script({ text: 'The word was QUINCE' });
  const mark = bed.fake.requests.length;
  await ok(p.dir, ['session', 'prompt', id, '--body', 'What was the word?'], { env: p.env });
  const next = await waitFor('the next turn at the model', () => bed.fake.requests.slice(mark).find((r) => r.kind === 'turn'), AGENT_WAIT);
  expect(JSON.stringify(next.body)).toContain('Remember the word QUINCE');
  await until(p, id, 'the resumed turn to end', (s) => s.state === 'awaiting' && s.reason === 'turn-end' && p.log(s.id).filter((l) => l.startsWith('await turn-end')).length >= 3);
  expect(p.screen(id)).toContain('The word was QUINCE');

  // Three failed turns in a row, each said with its error; the third quarantines the session.
  await ok(p.dir, ['session', 'prompt', id, '--body', 'First try [fake:status 400]'], { env: p.env });
  await until(p, id, 'the first failure', (s) => s.state === 'awaiting' && s.turnFailures === 1);
  expect((await p.show(id)).detail).toBe('the turn failed: APIError 400: The fake model refuses this request');
  keepScreen(p, id, 'failed-turn');
  await ok(p.dir, ['session', 'prompt', id, '--body', 'Second try [fake:status 400]'], { env: p.env });
  await until(p, id, 'the second failure', (s) => s.state === 'awaiting' && s.turnFailures === 2);
  await ok(p.dir, ['session', 'prompt', id, '--body', 'Third try [fake:status 400]'], { env: p.env });
  await until(p, id, 'the quarantine', (s) => s.state === 'quarantined');
  expect(p.log(id).filter((s) => s.startsWith('turn failed'))).toHaveLength(3);
}
