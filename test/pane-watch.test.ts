/**
 * Screens read when their panes write, not by polling (issue 40): PaneWatch keeps one tmux control client
 * per watched session, reads a screen through it after the pane wrote, at most every 700 ms, and never
 * spawns a process per read. A real tmux server on the test's own socket.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PANE_READ_MS, PaneWatch } from '../src/store/sessions/tmux/pane-watch.js';
import { Tmux } from '../src/store/sessions/tmux/tmux.js';
import { openProject } from '../src/store/compose/open-project.js';
import { appendCommand } from '../src/store/sessions/log/session-append.js';
import { reconcile } from '../src/store/sessions/verbs/supervisors.js';
import { cleanupRepos, tempRepo } from './helpers/repo.js';
import { killTmux, tmux, tmuxSocket, waitFor } from './helpers/sessions.js';

let home: string;
beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), 'trellis-pane-watch-'));
});
afterAll(() => {
  cleanupRepos();
  killTmux(home);
  rmSync(home, { recursive: true, force: true });
});

/** A tmux session running sh at 80x24, and its pane. */
function shell(name: string): { socket: string; session: string; pane: string } {
  tmux(home, '-f', '/dev/null', 'new-session', '-d', '-s', name, '-x', '80', '-y', '24', 'env PS1="$ " sh');
  return { socket: tmuxSocket(home), session: name, pane: tmux(home, 'display-message', '-p', '-t', `=${name}:`, '#{pane_id}')!.trim() };
}
const type = (name: string, line: string) => tmux(home, 'send-keys', '-t', `=${name}:`, line, 'Enter');
const clients = (name: string) => (tmux(home, 'list-clients', '-t', `=${name}`) ?? '').split('\n').filter(Boolean).length;

describe('PaneWatch', () => {
  it('reads a pane once, then only after it writes, at most every 700 ms, through one control client', async () => {
    const target = shell('busy');
    const reads: { at: number; screen: string }[] = [];
    const watch = new PaneWatch();
    try {
      watch.watch('s1', target, async (screen) => {
        reads.push({ at: performance.now(), screen });
        return false;
      });
      await waitFor('the first read', () => reads.length === 1, 10_000);
      expect(clients('busy')).toBe(1);

      // A burst of output for ~2 s: reads follow it, never closer than 700 ms apart.
      type('busy', 'for i in $(seq 40); do echo frame$i; sleep 0.05; done; echo BURST-$((1+1))');
      await waitFor('a read showing the burst ended', () => reads.some((r) => r.screen.includes('BURST-2')), 15_000);
      // Timed as the reader sees them, after each capture: a capture's own time varies by some ms.
      const gaps = reads.slice(1).map((r, i) => r.at - reads[i]!.at);
      for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(PANE_READ_MS - 50);
      // At most one read per 700 ms of the burst, plus the one that saw it start and the one after it ended.
      expect(reads.length).toBeLessThanOrEqual(2 + Math.ceil((reads.at(-1)!.at - reads[0]!.at) / PANE_READ_MS));

      // Quiet pane: no read until it writes again; then exactly one, showing what it wrote.
      const quietFrom = reads.length;
      type('busy', 'echo QUIET-$((2+2))');
      await waitFor('the read after the quiet pane wrote', () => reads.some((r) => r.screen.includes('QUIET-4')), 10_000);
      const after = reads.slice(quietFrom);
      // The reads since the quiet began are the ones the two writes (the typed line, its echo) caused: one
      // or two, never a poll's worth (the burst's wait above took seconds).
      expect(after.length).toBeLessThanOrEqual(2);
      expect(tmux(home, 'display-message', '-p', '-t', target.pane, '#{pane_width}x#{pane_height}')!.trim()).toBe('80x24');
    } finally {
      watch.stop();
    }
    await waitFor('the control client detached', () => clients('busy') === 0, 5_000);
  });

  it('a reader that asks again gets one more read with no output; unwatched, nothing more is read', async () => {
    const target = shell('again');
    const reads: string[] = [];
    const watch = new PaneWatch();
    try {
      watch.watch('s2', target, async (screen) => {
        reads.push(screen);
        return reads.length === 1;
      });
      await waitFor('the read asked for again', () => reads.length === 2, 10_000);
      type('again', 'echo AGAIN-$((3+3))');
      await waitFor('the read after the write', () => reads.some((r) => r.includes('AGAIN-6')), 10_000);
      expect(reads.slice(2).every((r, i, all) => i === all.length - 1 || !r.includes('AGAIN-6'))).toBe(true);
      const count = reads.length;
      watch.unwatch('s2');
      expect(watch.ids()).toEqual([]);
      type('again', 'echo GONE');
      await waitFor('the client detached', () => clients('again') === 0, 5_000);
      await waitFor('the pane showed GONE', () => (tmux(home, 'capture-pane', '-p', '-t', target.pane) ?? '').includes('GONE'), 5_000);
      expect(reads.length).toBe(count);
    } finally {
      watch.stop();
    }
  });

  it('a session whose tmux session ends is dropped', async () => {
    const target = shell('ends');
    const watch = new PaneWatch();
    let reads = 0;
    watch.watch('s3', target, async () => {
      reads++;
      return false;
    });
    await waitFor('the first read', () => reads === 1, 10_000);
    tmux(home, 'kill-session', '-t', '=ends');
    await waitFor('the watch dropped', () => watch.ids().length === 0, 5_000);
    watch.stop();
  });

  /*
   * The serve's watch (issue 40): one control client per tmux server, each watched pane's window linked into
   * the watch's own session. A client per session made tmux walk every client for every pane it read.
   */
  it('a shared watch hears every session through one control client, and leaves the agents\' sessions as they were', async () => {
    const targets = ['h1', 'h2', 'h3'].map(shell);
    const reads = new Map<string, string[]>();
    const watch = new PaneWatch(undefined, undefined, { shared: true });
    const allClients = () => (tmux(home, 'list-clients', '-F', '#{client_pid} #{session_name}') ?? '').split('\n').filter(Boolean);
    try {
      for (const t of targets) {
        reads.set(t.session, []);
        watch.watch(t.session, t, async (screen) => {
          reads.get(t.session)!.push(screen);
          return false;
        });
      }
      await waitFor('each pane read once', () => [...reads.values()].every((r) => r.length === 1), 10_000);
      // One client for the three, attached to a session of its own: none to the agents' sessions.
      await waitFor('the three windows linked', () => (tmux(home, 'list-windows', '-a', '-F', '#{session_name}') ?? '').split('\n').filter((s) => s.startsWith('trellis-watch-')).length === 4, 5_000);
      expect(allClients()).toHaveLength(1);
      expect(allClients()[0]).toMatch(/ trellis-watch-\d+-\d+$/);
      for (const t of targets) {
        expect(clients(t.session)).toBe(0);
        expect(tmux(home, 'list-windows', '-t', `=${t.session}`, '-F', '#{window_id}')!.trim().split('\n')).toHaveLength(1);
      }
      // Only the pane that wrote is read again.
      type('h2', 'echo ONLY-$((1+1))');
      await waitFor('h2 read after it wrote', () => reads.get('h2')!.some((r) => r.includes('ONLY-2')), 10_000);
      expect(reads.get('h1')).toHaveLength(1);
      expect(reads.get('h3')).toHaveLength(1);
      expect(tmux(home, 'display-message', '-p', '-t', targets[0]!.pane, '#{pane_width}x#{pane_height}')!.trim()).toBe('80x24');
      // Unwatched, a window leaves the watch's session and stays in its own.
      watch.unwatch('h1');
      await waitFor('h1 unlinked', () => (tmux(home, 'display-message', '-p', '-t', targets[0]!.pane, '#{window_linked_sessions_list}') ?? '').trim() === 'h1', 5_000);
    } finally {
      watch.stop();
    }
    // The last watch gone, its client and session go; the agents' sessions stay.
    await waitFor('the watch session gone', () => !(tmux(home, 'list-sessions', '-F', '#{session_name}') ?? '').includes('trellis-watch-'), 5_000);
    for (const t of targets) expect(tmux(home, 'has-session', '-t', `=${t.session}`)).not.toBeNull();
  });

  it("an agent's session closed while shared-watched takes its agent with it: by Tmux.kill at once, by anyone else as the watch hears it", async () => {
    const gone: string[] = [];
    const watch = new PaneWatch(undefined, (id) => gone.push(id), { shared: true });
    const panes = () => (tmux(home, 'list-panes', '-a', '-F', '#{pane_id}') ?? '').split('\n');
    const a = shell('k1');
    const b = shell('k2');
    try {
      let read = 0;
      for (const t of [a, b]) watch.watch(t.session, t, async () => (read++, false));
      await waitFor('both linked', () => (tmux(home, 'display-message', '-p', '-t', b.pane, '#{window_linked_sessions}') ?? '').trim() === '2' && (tmux(home, 'display-message', '-p', '-t', a.pane, '#{window_linked_sessions}') ?? '').trim() === '2', 10_000);
      // Tmux.kill: the pane is gone as the kill returns (it kills the window, which kill-session alone would leave linked, running).
      await new Tmux(tmuxSocket(home)).kill('k1');
      expect(panes()).not.toContain(a.pane);
      // A session closed by someone else: the window the watch alone holds is killed, and the watch drops it.
      tmux(home, 'kill-session', '-t', '=k2');
      await waitFor('k2 dropped by the watch', () => gone.includes('k2'), 5_000);
      await waitFor("k2's pane killed", () => !panes().includes(b.pane), 5_000);
      expect(watch.ids()).toEqual([]);
    } finally {
      watch.stop();
    }
  });

  it("the serve's reconcile pass knows a live agent by its own session while its window is linked into the watch's", async () => {
    const dir = tempRepo();
    const p = openProject(dir);
    const tm = new Tmux(tmuxSocket(home));
    const id = 'linked';
    const pane = await tm.launch(id, home, {}, 'sleep 600');
    await p.sessionLog.write(id, { type: 'spawn', harness: 'claude', task: 't', nodes: [], issue: null, base: 'HEAD', branch: `trellis/${id}`, worktree: join(home, 'none'), by: 'test', at: new Date().toISOString(), source: 'user' });
    await appendCommand(p, id, { type: 'start' }, 'test', 'supervisor');
    await appendCommand(p, id, { type: 'launch', tmuxSession: id, pane, awaitsSignal: true }, 'test', 'supervisor');
    await appendCommand(p, id, { type: 'busy' }, id, 'hook');
    const watch = new PaneWatch(undefined, undefined, { shared: true });
    try {
      watch.watch(id, { socket: tmuxSocket(home), session: id, pane }, async () => false);
      await waitFor('linked', () => (tmux(home, 'display-message', '-p', '-t', pane, '#{window_linked_sessions}') ?? '').trim() === '2', 10_000);
      // `list-panes -a` lists the pane under both sessions, the watch's last: the pass read it as "tmux gone"
      // and interrupted every watched session at the serve's first resync (a busy bench's dialog run found it).
      expect(await reconcile(p as Parameters<typeof reconcile>[0], { tmux: tm, apiUrl: async () => null, env: process.env })).toEqual([]);
      expect(await p.sessionLog.get(id)).toMatchObject({ status: 'running' });
      // Its own session gone (the window still linked to the watch for the moment): tmux-gone, as before.
      tmux(home, 'kill-session', '-t', `=${id}`);
      watch.stop();
      await waitFor('the watch session gone', () => !(tmux(home, 'list-sessions', '-F', '#{session_name}') ?? '').includes('trellis-watch-'), 5_000);
      expect(await reconcile(p as Parameters<typeof reconcile>[0], { tmux: tm, apiUrl: async () => null, env: process.env })).toEqual([id]);
      expect(await p.sessionLog.get(id)).toMatchObject({ status: 'interrupted', reason: 'tmux-gone' });
    } finally {
      watch.stop();
      await tm.kill(id);
    }
  });

  /*
   * tmux does not always run a pane's died hook while its window is linked into the watch's session (3 of
   * 16 runs of a test that waited for it): the shared watch hears the pane die itself (a subscription to
   * pane_dead) and tells its owner, the serve, which records the exit as the hook would.
   */
  it("a shared watch hears its pane's process exit, its window linked", async () => {
    const tm = new Tmux(tmuxSocket(home));
    // It exits once told to (a file, not typed keys), after its window is linked.
    const go = join(home, 'die-now');
    const pane = await tm.launch('dies', home, {}, `while [ ! -e '${go}' ]; do sleep 0.05; done; exit 3`);
    const died: string[] = [];
    const watch = new PaneWatch(undefined, undefined, { shared: true, died: (id) => died.push(id) });
    try {
      watch.watch('dies', { socket: tmuxSocket(home), session: 'dies', pane }, async () => false);
      await waitFor('linked', () => (tmux(home, 'display-message', '-p', '-t', pane, '#{window_linked_sessions}') ?? '').trim() === '2', 10_000);
      expect(died).toEqual([]);
      writeFileSync(go, '');
      await waitFor('the watch heard it die', () => died.length > 0, 10_000);
      expect(died).toEqual(['dies']);
      expect(tmux(home, 'display-message', '-p', '-t', pane, '#{pane_dead}')!.trim()).toBe('1');
    } finally {
      watch.stop();
      await tm.kill('dies');
    }
  });

  /*
   * tmux -C does not end when its stdin closes while its server still holds output for it (a busy pane):
   * a serve killed (or even stopped) while watching a busy agent left its control clients attached, and so
   * the tmux server running, for good (issue 40). The client made by a process (the compiled ControlClient,
   * as the serve runs it) ends when that process is SIGKILLed. On the old build it stayed attached.
   */
  it('a control client ends with the process that made it, even one killed by SIGKILL with output pending', async () => {
    const target = shell('spew');
    type('spew', 'while :; do seq 1 2000; done');
    const dist = pathToFileURL(join(import.meta.dirname, '../dist/src/store/sessions/tmux/control-client.js')).href;
    const src = `import { ControlClient } from ${JSON.stringify(dist)};
const c = new ControlClient(${JSON.stringify(target)}, { output() {}, paused() {}, layout() {}, exit() {} });
await c.command('display-message -p ok');
process.stdout.write('attached ' + c.pid + '\\n');
setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', src], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    const pid = Number((await waitFor('the control client attached', () => /attached (\d+)/.exec(out), 10_000))[1]);
    expect(clients('spew')).toBe(1);
    child.kill('SIGKILL');
    await waitFor(`the control client (pid ${pid}) gone after its process was killed`, () => clients('spew') === 0 && !alive(pid), 5_000);
  });
});

/** Whether process `pid` runs (a zombie left for init to reap does not). */
function alive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}
