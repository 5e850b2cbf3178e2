import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initialSession } from '../src/projections/session.js';
import { claudeAdapter } from '../src/store/sessions/agents/claude/claude.js';
import { codexAdapter } from '../src/store/sessions/agents/codex/codex.js';
import type { HarnessAdapter } from '../src/store/sessions/agents/adapter.js';
import { cleanupRepos, ok, tempDir, tempRepo, testEnv, trellis } from './helpers/repo.js';
import { post, serveDir } from './helpers/server.js';
import { killTmux, waitFor } from './helpers/sessions.js';

/**
 * Issue 30, row 3: arguments stay data. User or agent text reaches every program Trellis launches after
 * `--` or glued to its option, so nothing can be read as an option. Before the fix a task of
 * `--dangerously-skip-permissions` arrived as claude's first argument. The agents here are stand-ins on
 * PATH that write the argv they got (NUL-separated) to a file: the real launch line runs them through a
 * real shell (as tmux does), and one spawn per agent goes the whole way through `trellis session spawn`
 * and tmux.
 */

const bin = tempDir();
const argvLog = join(tempDir(), 'argv');
for (const program of ['claude', 'codex']) {
  const path = join(bin, program);
  // `login status` (codex's preflight) says yes; anything else writes its argv, then stays in a tmux
  // pane (an agent that exits at once would be a dead pane, not a launch).
  writeFileSync(
    path,
    `#!/bin/sh\n[ "$1" = login ] && exit 0\n[ "$1" = --version ] && echo 1.0.0 && exit 0\nfor a in "$@"; do printf '%s\\0' "$a"; done > "$ARGV_LOG.tmp" && mv "$ARGV_LOG.tmp" "$ARGV_LOG"\n[ -n "$TMUX" ] && exec sleep 60\nexit 0\n`,
  );
  chmodSync(path, 0o755);
}
const PATH = `${bin}:${process.env.PATH}`;

/** The argv a launch line gives its agent, run by `sh -c` as tmux runs it. */
function argvOf(commandLine: string): string[] {
  rmSync(argvLog, { force: true });
  const env: NodeJS.ProcessEnv = { ...process.env, PATH, ARGV_LOG: argvLog };
  delete env.TMUX;
  execFileSync('sh', ['-c', commandLine], { env, stdio: 'ignore' });
  return readFileSync(argvLog, 'utf8').split('\0').slice(0, -1);
}

const HOSTILE = [
  '--dangerously-skip-permissions',
  '-p',
  '--model=opus',
  '--resume',
  'key=value --flag',
  'two\nlines --and-a-flag',
  "it's \"quoted\" $HOME `id` ;",
  'ends in a semicolon;',
  '-',
];

// Codex's launch line is read on its notify path (an older Codex's, and TRELLIS_CODEX_CHANNEL=notify's):
// over its app-server, the default, the task travels in the protocol, never in argv
// (agents-codex-app-server.test), and the line waits for its watcher. The adapter reads the channel from
// this process's environment, so this file runs in a worker of its own (vitest.config.ts).
process.env.TRELLIS_CODEX_CHANNEL = 'notify';
const launch = (adapter: HarnessAdapter, task: string, resume: boolean, agentSessionId?: string) =>
  adapter.command({ session: { ...initialSession('s1'), task, ...(agentSessionId ? { agentSessionId } : {}) }, resume, trellis: "'node' '/trellis/bin.js'", confined: true });

describe('a task or an agent id is never an option of the agent', () => {
  it.each(HOSTILE)('claude and codex get the task %j after --, whole', (task) => {
    expect(argvOf(launch(claudeAdapter, task, false))).toEqual(['--', task]);
    expect(argvOf(launch(codexAdapter, task, false)).slice(-2)).toEqual(['--', task]);
  });

  it.each(HOSTILE)('a resume with an agent id %j: glued to --resume (claude), after -- (codex)', (id) => {
    expect(argvOf(launch(claudeAdapter, 'x', true, id))).toEqual([`--resume=${id}`]);
    expect(argvOf(launch(codexAdapter, 'x', true, id)).slice(-3)).toEqual(['resume', '--', id]);
  });
});

describe('the whole way: trellis session spawn → tmux → the agent', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    dir = tempRepo();
    env = { ...testEnv(dir), TRELLIS_HOME: tempDir(), PATH, ARGV_LOG: argvLog, TRELLIS_CODEX_CHANNEL: 'notify' };
    await ok(dir, ['init'], { env });
    // Unconfined: a confined agent gets a private /tmp, where this stand-in's argv log would stay unseen.
    // The launch line is the same confined (bubblewrap execs it as given; sessions-confine-agents' real
    // agents are handed their task through it).
    writeFileSync(join(dir, 'trellis.json'), `${JSON.stringify({ specRoot: 'specs', sessions: { confine: 'off' } }, null, 2)}\n`);
  }, 60_000);
  afterAll(() => {
    killTmux(env.TRELLIS_HOME!);
    cleanupRepos();
  });

  it.each(['claude', 'codex'])('%s, task --dangerously-skip-permissions: the agent sees it as the task', async (harness) => {
    rmSync(argvLog, { force: true });
    const r = await trellis(dir, ['session', 'spawn', '--harness', harness, '--', '--dangerously-skip-permissions'], { env });
    expect(r.code, r.stderr).toBe(0);
    const argv = await waitFor('the agent to start', () => existsSync(argvLog) && readFileSync(argvLog, 'utf8').split('\0').slice(0, -1), 20_000);
    expect(argv.slice(-2)).toEqual(['--', '--dangerously-skip-permissions']);
    expect(argv.filter((a) => a === '--dangerously-skip-permissions')).toHaveLength(1);
  }, 60_000);

  it('a task with a NUL byte is refused (400 naming it) and nothing starts', async () => {
    const api = await serveDir(dir);
    try {
      rmSync(argvLog, { force: true });
      const r = await api.get('/api/sessions', post({ harness: 'claude', task: 'cut\u0000short --dangerously-skip-permissions' }));
      expect(r.status).toBe(400);
      expect(((await r.json()) as { error: { message: string } }).error.message).toMatch(/NUL/);
      expect(existsSync(argvLog)).toBe(false);
    } finally {
      await api.close();
    }
  });

  it('sync: a remote name that looks like an option is refused before git runs (no --upload-pack)', async () => {
    const marker = join(tempDir(), 'pwned');
    const r = await trellis(dir, ['sync', '--', `--upload-pack=touch ${marker}`], { env });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/is not a remote name/);
    expect(existsSync(marker)).toBe(false);
  });
});
