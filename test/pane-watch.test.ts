/**
 * Screens read when their panes write, not by polling (issue 40): PaneWatch keeps one tmux control client
 * per watched session, reads a screen through it after the pane wrote, at most every 700 ms, and never
 * spawns a process per read. A real tmux server on the test's own socket.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PANE_READ_MS, PaneWatch } from '../src/store/sessions/tmux/pane-watch.js';
import { killTmux, tmux, tmuxSocket, waitFor } from './helpers/sessions.js';

let home: string;
beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), 'trellis-pane-watch-'));
});
afterAll(() => {
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
});
