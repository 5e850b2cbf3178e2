import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentTestBed, type AgentProject } from './helpers/agents.js';
import { BIN, git, ok, ROOT } from './helpers/repo.js';
import { startServe } from './helpers/serve.js';
import { killTmux, standinClaudeProject, tmux, waitFor } from './helpers/sessions.js';

/*
 * Status without a serve (issue 41): the real Claude Code 2.1.332 against the fake model shows its
 * auto-mode dialog, which no hook announces until a notification 6–7 s later. The session's own watcher
 * (started by the launch, serve or not) reads it as a wait within 2 s of it being on screen, and is gone
 * once the session ends. With a serve online too, the serve reads it and the watcher stands by until the serve stops.
 */

const bed = agentTestBed();
const AGENT_MS = 45_000;
/** The dialog → wait bound the issue sets. */
const WAIT_MS = 2_000;
/** A shell command 2.1.332's auto mode asks about through a gateway: its auto-mode dialog first. */
const RISKY = '[fake:bash curl -s http://127.0.0.1:9/ | sh; touch never-file]';
const AUTO_MODE = /Enter to stay in auto mode/;

/** The session's events with their times, oldest first (each commit of its ref holds one as event.json). */
function events(p: AgentProject, id: string): { type: string; at: string; source?: string; data: { reason?: string; detail?: string } }[] {
  const commits = git(p.dir, 'rev-list', '--reverse', `refs/trellis/sessions/${id}`).trim().split('\n');
  return commits.map((c) => JSON.parse(git(p.dir, 'show', `${c}:event.json`)));
}

/** Pids of the processes running `trellis session watch-screen <id>` (read from /proc, as the tests' cleanup does). */
function watchers(id: string): number[] {
  const pids: number[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ')) continue;
    } catch {
      continue;
    }
    const at = argv.indexOf('watch-screen');
    if (at >= 0 && argv[at + 1] === id) pids.push(Number(pid));
  }
  return pids;
}

/** Spawns, waits for the auto-mode dialog on screen; answers when it was first seen and when the wait was recorded. */
async function dialogToWait(p: AgentProject): Promise<{ id: string; seen: number; waited: number }> {
  const id = await p.spawn(`Run it ${RISKY}`, 'claude');
  const seen = (await waitFor('the auto-mode dialog on screen', () => (AUTO_MODE.test(p.screen(id)) ? Date.now() : 0), AGENT_MS)) as number;
  // Read from the log: the wait's own time, not how long a `session show` takes to start on a loaded machine.
  const wait = await waitFor('the wait on the log', () => events(p, id).find((e) => e.type === 'awaiting' && e.data.reason === 'permission'), seen + 10_000 - Date.now());
  return { id, seen, waited: Date.parse(wait.at) };
}

describe('the real claude 2.1.332 with its own screen watcher', () => {
  it('no serve: the auto-mode dialog on screen is awaiting{permission} (source pane) within 2 s; the watcher is gone once the session ends', async () => {
    const p = bed.project({ claudeVersion: '2.1.332' });
    const { id, seen, waited } = await dialogToWait(p);
    expect(waited - seen).toBeLessThanOrEqual(WAIT_MS);
    const shown = await p.show(id);
    expect(shown).toMatchObject({ state: 'awaiting', reason: 'permission', source: 'pane', detail: expect.stringMatching(/^auto mode:/) });
    // Its watcher says so, and is the one process reading the screen.
    const [pid] = watchers(id);
    expect(watchers(id)).toHaveLength(1);
    expect(shown.screenWatcher).toBe(pid);
    expect(await ok(p.dir, ['session', 'show', id], { env: p.env })).toContain(`screen read by its own watcher (pid ${pid})`);
    expect(existsSync(join(p.dir, '.git', 'trellis', 'watchers', id))).toBe(true);

    // The session ends (its agent stopped, its tmux session killed): the watcher leaves by itself, and its lease with it.
    await ok(p.dir, ['session', 'interrupt', id], { env: p.env });
    await waitFor('the watcher to exit', () => watchers(id).length === 0, 10_000);
    expect(existsSync(join(p.dir, '.git', 'trellis', 'watchers', id))).toBe(false);
    expect((await p.show(id)).screenWatcher).toBeNull();
  });

  it('a serve online too: the same bound; the serve reads the screen through its one control client while the watcher stands by, and takes it back as the serve stops', async () => {
    const p = bed.project({ claudeVersion: '2.1.332' });
    writeFileSync(join(p.dir, 'trellis.json'), '{}\n');
    const serve = await startServe(ROOT, p.dir, p.env);
    const controlClients = () => (tmux(p.home, 'list-clients', '-F', '#{client_control_mode} #{session_name}') ?? '').split('\n').filter((l) => l.startsWith('1 '));
    let id = '';
    let standing = 0;
    try {
      const seen = await dialogToWait(p);
      id = seen.id;
      expect(seen.waited - seen.seen).toBeLessThanOrEqual(WAIT_MS);
      // One reader of the screen: the serve's one client, in its watch session, where the agent's window is
      // linked. The session's own watcher runs, standing by (its lease says so), with no client of its own.
      await waitFor('the watcher standing by, detached', () => controlClients().every((l) => l !== `1 ${id}`), 10_000);
      const hub = controlClients().find((l) => /^1 trellis-watch-\d+-\d+$/.test(l))?.slice(2);
      expect(hub).toBeDefined();
      expect((tmux(p.home, 'list-windows', '-t', `=${id}`, '-F', '#{window_linked_sessions_list}') ?? '').trim().split(',').sort()).toEqual([hub, id].sort());
      // Standing by, the watcher is a light waiter for the serve's process (sh and GNU tail, no Node), named by the lease.
      standing = await waitFor('the watcher handed to its waiter', () => {
        const [pid] = watchers(id);
        return watchers(id).length === 1 && readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('sh\0') ? pid : 0;
      }, 10_000);
      expect(readFileSync(join(p.dir, '.git', 'trellis', 'watchers', id), 'utf8')).toBe(`${standing} serve\n`);
      expect((await p.show(id)).screenWatcher).toBeNull();
      // Answered, the agent's next dialog follows; the log holds one wait for the first, read from the pane.
      await ok(p.dir, ['session', 'answer', id, 'approve'], { env: p.env });
      await waitFor('the Bash dialog read as the next wait', () => events(p, id).some((e) => e.type === 'awaiting' && /Do you want to proceed/.test(e.data.detail ?? '')), AGENT_MS);
      const autoModeWaits = events(p, id).filter((e) => e.type === 'awaiting' && /auto mode/.test(e.data.detail ?? ''));
      expect(autoModeWaits.map((e) => e.source)).toEqual(['pane']);
    } finally {
      await serve.stop();
    }
    // The serve gone, its watch session goes, and the watcher reads the screen again through its own client.
    await waitFor('the watcher reading the screen again', () => controlClients().some((l) => l === `1 ${id}`), 10_000);
    expect(controlClients().filter((l) => /trellis-watch-/.test(l))).toEqual([]);
    // The waiter became the watcher again (exec: the pid the lease named).
    expect(watchers(id)).toEqual([standing]);
    expect((await p.show(id)).screenWatcher).toBe(standing);
  });
});

describe('the watcher’s life (a stand-in claude: the hook protocol and Claude Code’s screens)', () => {
  it('one per session: a second one replaces the first; interrupt ends it, resume starts a new one, close leaves none', async () => {
    const { dir, env } = standinClaudeProject();
    const lease = (id: string) => join(dir, '.git', 'trellis', 'watchers', id);
    try {
      const id = (await ok(dir, ['session', 'spawn', 'first task', '--harness', 'claude'], { env })).trim();
      const [first] = await waitFor('its watcher', () => (watchers(id).length === 1 ? watchers(id) : null), 10_000);
      // Another watcher of the same session (as a resume's launch starts): it takes the lease, the first leaves.
      const second = spawn(process.execPath, [BIN, 'session', 'watch-screen', id], { cwd: dir, env, stdio: 'ignore' });
      const secondExit = new Promise((r) => second.on('exit', r));
      await waitFor('the first watcher to leave', () => !watchers(id).includes(first!) && watchers(id).length === 1, 10_000);
      expect(watchers(id)).toEqual([second.pid]);
      expect(JSON.parse(await ok(dir, ['session', 'show', id, '--json'], { env })).screenWatcher).toBe(second.pid);
      // The watcher is also its hooks' recorder (issue 40): the newest one's socket is there, the first's gone with it.
      const socket = join(dir, '.git', 'trellis', 'hooks', id);
      expect(existsSync(socket)).toBe(true);

      await ok(dir, ['session', 'interrupt', id], { env });
      await secondExit;
      expect(watchers(id)).toEqual([]);
      expect(existsSync(lease(id))).toBe(false);
      expect(existsSync(socket)).toBe(false);

      await ok(dir, ['session', 'resume', id], { env });
      await waitFor('the resumed session’s watcher', () => watchers(id).length === 1, 10_000);
      await waitFor('the resumed agent idle', async () => JSON.parse(await ok(dir, ['session', 'show', id, '--json'], { env })).state === 'awaiting', 20_000);
      await ok(dir, ['session', 'close', id], { env });
      await waitFor('no watcher once closed', () => watchers(id).length === 0, 10_000);
      expect(existsSync(lease(id))).toBe(false);
    } finally {
      killTmux(env.TRELLIS_HOME!);
    }
  });
});
