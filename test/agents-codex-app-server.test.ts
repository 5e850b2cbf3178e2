import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentPrograms, agentTestBed, CODEX_VERSIONS, type AgentProject } from './helpers/agents.js';
import { ok, tempDir } from './helpers/repo.js';
import { waitFor } from './helpers/sessions.js';

/*
 * Codex over its own app-server (issue 41): each session runs `codex app-server` on a unix socket in its
 * folder, the stock TUI attached to it in the pane, Trellis a second client. The real Codex (both
 * versions) against the fake OpenAI API, unconfined, and confined (the default both ways; the server in the
 * sandbox, bridged by the relay to the watcher outside).
 */

const bed = agentTestBed();
const AGENT_WAIT = 60_000;

function unconfined(p: AgentProject): void {
  const file = join(p.dir, 'trellis.local.json');
  const settings = JSON.parse(readFileSync(file, 'utf8')) as { sessions: Record<string, unknown> };
  writeFileSync(file, JSON.stringify({ ...settings, sessions: { ...settings.sessions, confine: 'off' } }));
}

/** Whether `pid` runs (a zombie, exited but not yet reaped, does not). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

const protocolFile = (p: AgentProject, id: string, name: string) => join(p.home, 'codex', id, name);

function world(codexVersion: (typeof CODEX_VERSIONS)[number]) {
  const p = bed.project({ codexVersion });
  unconfined(p);
  const env: NodeJS.ProcessEnv = { ...p.env, TRELLIS_CODEX_STALL_MS: '5000' };
  const spawn = async (task: string) => (JSON.parse(await ok(p.dir, ['session', 'spawn', task, '--harness', 'codex', '--json'], { env })) as { id: string }).id;
  const until = (what: string, id: string, check: (s: Awaited<ReturnType<AgentProject['show']>>) => boolean) =>
    waitFor(what, async () => {
      const s = await p.show(id);
      return check(s) ? s : null;
    }, AGENT_WAIT);
  return { p, env, spawn, until };
}

describe.each(CODEX_VERSIONS)('codex %s over its app-server', (codexVersion) => {
  it('a turn Trellis started ends from the protocol and shows in the TUI; usage; no folder trusted; resume; the server killed → interrupted', async () => {
    const { p, env, spawn, until } = world(codexVersion);
    const config = readFileSync(join(p.agent.codexHome, 'config.toml'), 'utf8');
    const text = await spawn('Say hi to APPSERVER');
    const ended = await until('the text turn to end', text, (s) => s.state === 'awaiting' && s.reason === 'turn-end');
    expect(ended).toMatchObject({ source: 'protocol', channel: 'protocol' });
    expect(ended.agentSessionId).toMatch(/^[0-9a-f-]{36}$/);
    await waitFor('the TUI to show the turn', () => /Say hi to APPSERVER/.test(p.screen(text)) && /Fake reply to: Say hi to APPSERVER/.test(p.screen(text)), AGENT_WAIT);
    // Token usage, read as the protocol reported it.
    await waitFor('a usage record', () => p.log(text).some((l) => /usage/.test(l)), AGENT_WAIT);
    // Its update (thread/tokenUsage/updated) was recorded by the turn's end, in that signal's own append:
    // one log write, not two (issue 41: a Codex event's CPU). The watcher's counts, written at the turn's end.
    expect(JSON.parse(readFileSync(protocolFile(p, text, 'watch-stats.json'), 'utf8'))).toMatchObject({ turns: 1, carried: 1 });
    // No folder trusted in the person's Codex config by Trellis's thread/start (the stock TUI keeps
    // writing its own `[tui]` notes there, as it does on any path).
    const projects = (toml: string) => (toml.match(/^\[projects\..*$/gm) ?? []).join('\n');
    expect(projects(readFileSync(join(p.agent.codexHome, 'config.toml'), 'utf8'))).toBe(projects(config));

    // Resume: the same thread, its TUI attached again, waiting at its input. The first launch's watcher
    // is gone before it could stop its server (as a loaded machine's notices late): codex refuses a second
    // server on the same socket path while that one runs ("app-server control socket is already in use"),
    // so the resume's watcher ends it first (before, the resume fell back to notify: 'starting' for good).
    const firstServer = Number(readFileSync(protocolFile(p, text, 'app-server.pid'), 'utf8'));
    process.kill(Number(readFileSync(protocolFile(p, text, 'watch.pid'), 'utf8')), 'SIGKILL');
    await ok(p.dir, ['session', 'interrupt', text], { env });
    await ok(p.dir, ['session', 'resume', text], { env });
    const resumed = await until('the resumed session to wait', text, (s) => s.state === 'awaiting' && s.source === 'protocol');
    expect(resumed.agentSessionId).toBe(ended.agentSessionId);
    expect(Number(readFileSync(protocolFile(p, text, 'app-server.pid'), 'utf8'))).not.toBe(firstServer);
    expect(running(firstServer)).toBe(false);
    await waitFor('the resumed TUI to show the conversation', () => /Say hi to APPSERVER/.test(p.screen(text)), AGENT_WAIT);

    // The app-server killed: the session says so and is not left running.
    const pid = Number(readFileSync(protocolFile(p, text, 'app-server.pid'), 'utf8'));
    process.kill(pid, 'SIGKILL');
    const gone = await until('the session to learn its server ended', text, (s) => s.state !== 'awaiting' && s.state !== 'running');
    expect(gone).toMatchObject({ state: 'interrupted', source: 'protocol' });
    expect(String(gone.detail)).toContain("Codex's app-server was killed (SIGKILL)");
    // Three agent phases (a turn, a resume, a server's end), each waited for with its own deadline: the
    // whole-suite run (two files at once on 2 cores) took this one test past the 60 s meant for one phase.
  }, 150_000);

  it('a command approval waits naming its decisions and is answered by name through the protocol; another declined', async () => {
    const { p, env, spawn, until } = world(codexVersion);
    const approve = await spawn('Touch [fake:bash touch approved-file]');
    const decline = await spawn('Touch [fake:bash touch declined-file]');
    const asking = await until('the approval', approve, (s) => s.state === 'awaiting' && s.reason === 'permission');
    expect(asking).toMatchObject({ source: 'protocol' });
    expect(String(asking.detail)).toContain('touch approved-file');
    expect(String(asking.detail)).toMatch(/options: accept, acceptWithExecpolicyAmendment, cancel, decline/);
    const bad = await ok(p.dir, ['session', 'answer', approve, 'maybe'], { env }).catch((e: Error) => e.message);
    expect(bad).toMatch(/Codex offers accept, acceptWithExecpolicyAmendment, cancel, decline; 'maybe' names none of them/);
    // The person's TUI draws the same approval (the server asks every client of the thread).
    await waitFor('the TUI to draw the approval', () => /Yes, proceed/.test(p.screen(approve)), AGENT_WAIT);
    expect(await ok(p.dir, ['session', 'answer', approve, 'accept'], { env })).toContain('answered "accept"');
    await until('the approved turn to end', approve, (s) => s.state === 'awaiting' && s.reason === 'turn-end');
    expect(existsSync(join(asking.worktree, 'approved-file'))).toBe(true);
    // Answered through the protocol, the TUI's dialog is gone too: no key was typed.
    await waitFor('the TUI to drop the answered dialog', () => !/Yes, proceed/.test(p.screen(approve)), AGENT_WAIT);

    await until('the second approval', decline, (s) => s.state === 'awaiting' && s.reason === 'permission');
    expect(await ok(p.dir, ['session', 'answer', decline, 'decline'], { env })).toContain('answered "decline"');
    const declined = await until('the declined turn to end', decline, (s) => s.state === 'awaiting' && s.reason === 'turn-end');
    expect(existsSync(join(declined.worktree, 'declined-file'))).toBe(false);
  });

  it('failed turns named by codexErrorInfo; a silent turn stalled, never retried, then interrupted from the TUI', async () => {
    const { p, env, spawn, until } = world(codexVersion);
    const auth = await spawn('Fail [fake:status 401]');
    const failed = await spawn('Fail [fake:status 400]');
    const hang = await spawn('Hang [fake:hang]');
    const refused = await until('the 401', auth, (s) => s.state === 'awaiting' && s.reason === 'auth');
    expect(refused).toMatchObject({ source: 'protocol' });
    expect(String(refused.detail)).toContain('httpConnectionFailed 401');
    const fail = await until('the 400', failed, (s) => s.state === 'awaiting' && s.reason === 'turn-end');
    expect(String(fail.detail)).toMatch(/^the turn failed: other: /);
    expect(fail.turnFailures).toBe(1);

    const stalled = await until('the stall', hang, (s) => s.state === 'awaiting' && s.reason === 'stalled');
    expect(stalled).toMatchObject({ source: 'protocol' });
    const hangTurns = () => bed.fake.requests.filter((r) => r.kind === 'turn' && JSON.stringify(r.body).includes('Hang [fake:hang]')).length;
    const turns = hangTurns();
    await ok(p.dir, ['session', 'keys', hang, 'Escape'], { env });
    const interrupted = await until('the interrupted turn', hang, (s) => s.state === 'awaiting' && s.reason === 'turn-end');
    expect(interrupted.detail).toBe('the turn was interrupted');
    expect(hangTurns()).toBe(turns);
  });
});

describe.each(CODEX_VERSIONS)('codex %s confined over its app-server (by default)', (codexVersion) => {
  it('the server runs in the sandbox, its bridge reaches the watcher outside: the turn and an approval by name come from the protocol', async () => {
    const p = bed.project({ codexVersion });
    const env: NodeJS.ProcessEnv = { ...p.env };
    delete env.TRELLIS_CODEX_CHANNEL;
    const id = (JSON.parse(await ok(p.dir, ['session', 'spawn', 'Touch [fake:bash touch confined-file]', '--harness', 'codex', '--json'], { env })) as { id: string }).id;
    const until = (what: string, check: (s: Awaited<ReturnType<AgentProject['show']>>) => boolean) =>
      waitFor(what, async () => {
        const s = await p.show(id);
        return check(s) ? s : null;
      }, AGENT_WAIT).catch((err: Error) => {
        throw new Error(`${err.message}; the pane shows:\n${p.screen(id)}`);
      });
    const asking = await until('the approval', (s) => s.state === 'awaiting' && s.reason === 'permission');
    expect(asking).toMatchObject({ source: 'protocol', channel: 'protocol', confinement: { confined: true } });
    expect(String(asking.detail)).toContain('touch confined-file');
    expect(await ok(p.dir, ['session', 'answer', id, 'accept'], { env })).toContain('answered "accept"');
    const ended = await until('the turn to end', (s) => s.state === 'awaiting' && s.reason === 'turn-end');
    expect(ended).toMatchObject({ source: 'protocol' });
    expect(existsSync(join(ended.worktree, 'confined-file'))).toBe(true);
    // The server is the sandbox's: no server of the watcher's own, and the person's TUI in the pane shows the turn.
    expect(existsSync(protocolFile(p, id, 'app-server.pid'))).toBe(false);
    await waitFor('the TUI to show the turn', () => /Touch \[fake:bash touch confined-file\]/.test(p.screen(id)), AGENT_WAIT);
  });
});

describe('an older Codex', () => {
  it('takes the notify path: the watcher refuses it by version, the pane runs codex with its notify program', async () => {
    const { p, env, spawn, until } = world(CODEX_VERSIONS[0]);
    // The real codex, saying it is 0.160.0 (older than the app-server path was checked against).
    const bin = join(tempDir(), 'old-codex');
    mkdirSync(bin);
    writeFileSync(join(bin, 'codex'), `#!/bin/sh\n[ "$1" = --version ] && { echo 'codex-cli 0.160.0'; exit 0; }\nexec ${agentPrograms(undefined, CODEX_VERSIONS[0]).codex} "$@"\n`);
    chmodSync(join(bin, 'codex'), 0o755);
    env.PATH = `${bin}:${env.PATH}`;
    const id = await spawn('Say hi the old way');
    const ended = await until('the turn to end', id, (s) => s.state === 'awaiting' && s.reason === 'turn-end');
    expect(ended).toMatchObject({ source: 'hook', channel: 'notify' });
    expect(readFileSync(protocolFile(p, id, 'refused'), 'utf8')).toMatch(/Codex codex-cli 0.160.0 is older than the app-server path needs/);
    expect(existsSync(protocolFile(p, id, 'control.sock'))).toBe(false);
  });
});
