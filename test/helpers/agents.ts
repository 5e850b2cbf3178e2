import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';
import { dirname, join } from 'node:path';
import { agentHome, stopAgentDaemons, writeGeminiState, type AgentHome, type AgentSetup } from '../fake-model/agents.js';
import { startFakeModel, type FakeModel } from '../fake-model/server.js';
import { cleanupRepos, git, ok, tempDir, tempRepo, testEnv, trellis } from './repo.js';
import { killTmux, tmux } from './sessions.js';

export { agentHome, agentPrograms, CLAUDE_VERSION, CLAUDE_VERSIONS, CODEX_VERSION, CODEX_VERSIONS, FAKE_API_KEY, type ClaudeVersion, type CodexVersion } from '../fake-model/agents.js';
export { startFakeModel, type FakeModel } from '../fake-model/server.js';

/** A project whose sessions run the real claude and codex against the fake model, from a HOME of its own. */
export interface AgentProject {
  /** The project's main checkout. */
  readonly dir: string;
  /** Its TRELLIS_HOME (the tmux socket is `<home>/tmux.sock`). */
  readonly home: string;
  readonly agent: AgentHome;
  /** The environment every `trellis` run of the test uses: the tmux server, and so each agent, inherits it. */
  readonly env: NodeJS.ProcessEnv;
  /** `trellis session show <id> --json`. */
  show(id: string): Promise<SessionShow>;
  /** `trellis session spawn <task> --harness <harness> --json`: the new session's id. */
  spawn(task: string, harness: 'claude' | 'codex' | 'gemini' | 'shell'): Promise<string>;
  /** The same spawn, whole: its JSON (with `warnings`) and the CLI's stderr. */
  spawnRun(task: string, harness: 'claude' | 'codex' | 'gemini' | 'shell'): Promise<{ id: string; warnings: string[]; stderr: string }>;
  /** The subjects of the session's log, oldest first (`launch: …`, `await setup: … (pane)`, …). */
  log(id: string): string[];
  /** The pane's current screen (plain text). */
  screen(id: string): string;
}

export interface SessionShow {
  readonly id: string;
  readonly state: string;
  readonly reason: string | null;
  readonly source: string | null;
  readonly agentSessionId: string | null;
  readonly worktree: string;
  readonly [k: string]: unknown;
}

/**
 * A fresh repository and Trellis home, and an agent HOME set up as `setup` says. By default the main
 * checkout is trusted by both agents, claude is onboarded with the key approved and codex is logged in:
 * an agent that starts straight into its prompt. The queue never holds a session back (no free-memory floor).
 */
export function agentProject(fake: FakeModel, setup: AgentSetup & { trustProject?: boolean } = {}): AgentProject {
  const dir = tempRepo();
  // Sessions run confined (issue 45): the fake model on loopback is on the project's network allow-list.
  writeFileSync(join(dir, 'trellis.local.json'), JSON.stringify({ sessions: { minFreeMb: 0, max: 8, network: [new URL(fake.url).host] } }));
  const agent = agentHome(fake.url, { ...setup, trust: [...(setup.trust ?? []), ...(setup.trustProject === false ? [] : [dir])] }, tempDir());
  // The Trellis home (and so every worktree) outside the main checkout, as on a user's machine: trust of
  // the checkout then covers a worktree only if the agent keys it by the main checkout, not by ancestry.
  const env = { ...testEnv(dir), TRELLIS_HOME: join(tempDir(), 'trellis-home'), ...agent.env, SHELL: '/bin/sh' };
  const home = env.TRELLIS_HOME!;
  // Gemini CLI trusts by path, not by repository: a trusted project trusts its worktrees under the Trellis home too.
  if (setup.trustProject !== false) writeGeminiState(agent.home, [dir, dirname(home)]);
  return {
    dir,
    home,
    agent,
    env,
    show: async (id) => JSON.parse(await ok(dir, ['session', 'show', id, '--json'], { env })) as SessionShow,
    spawn: async (task, harness) => (JSON.parse(await ok(dir, ['session', 'spawn', task, '--harness', harness, '--json'], { env })) as { id: string }).id,
    spawnRun: async (task, harness) => {
      const r = await trellis(dir, ['session', 'spawn', task, '--harness', harness, '--json'], { env });
      if (r.code !== 0) throw new Error(`spawn exited ${r.code}: ${r.stderr}`);
      const { id, warnings } = JSON.parse(r.stdout) as { id: string; warnings: string[] };
      return { id, warnings, stderr: r.stderr };
    },
    log: (id) => git(dir, 'log', '--reverse', '--format=%s', `refs/trellis/sessions/${id}`).trim().split('\n'),
    screen: (id) => tmux(home, 'capture-pane', '-p', '-t', `=${id}:`) ?? '',
  };
}

/** Stops a project's agents: its tmux server, and what the agents left running from their HOME (codex's daemon). */
export function stopAgents(p: AgentProject): void {
  killTmux(p.home);
  stopAgentDaemons(p.agent.home, p.dir, p.home);
}

/**
 * The fake model and the agent projects of one test file: the model starts before the file's tests; after
 * them every agent process left in those projects is ended (codex's app-server outlives its TUI), the
 * model closes and the repositories go.
 */
export function agentTestBed(): { readonly fake: FakeModel; project(setup?: Parameters<typeof agentProject>[1]): AgentProject } {
  let fake: FakeModel | undefined;
  const projects: AgentProject[] = [];
  beforeAll(async () => {
    fake = await startFakeModel();
  });
  afterAll(async () => {
    for (const p of projects) stopAgents(p);
    await fake?.close();
    cleanupRepos();
  });
  return {
    get fake(): FakeModel {
      if (!fake) throw new Error('the fake model starts in beforeAll: use it inside a test');
      return fake;
    },
    project(setup = {}) {
      const p = agentProject(this.fake, setup);
      projects.push(p);
      return p;
    },
  };
}
