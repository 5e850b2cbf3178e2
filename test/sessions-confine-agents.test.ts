import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentTestBed, CLAUDE_VERSIONS, CODEX_VERSION, type AgentProject } from './helpers/agents.js';
import { BIN, git, ok, ROOT, trellis } from './helpers/repo.js';
import { startServe } from './helpers/serve.js';
import { runInstalledHook, waitFor } from './helpers/sessions.js';
import { OPENCODE_VERSION, opencodeBinDir, opencodeHome } from './fake-model/opencode.js';

/*
 * Agents as untrusted principals (issue 45), with the real agent programs: a claude (the oldest and the
 * newest Claude Code of the matrix), codex or opencode session, driven by the fake model, runs each row as its own
 * shell tool call's commands — what it must not do in one call, what it may do in a second — and every
 * permission dialog the agent shows is approved by name through `trellis session answer` (no bypass
 * mode: the sandbox, not the agent's own prompt, is what refuses). Each row prints its exit status, which
 * the fake model reads in the tool's result; what changed is then checked from outside.
 */

const bed = agentTestBed();
const AGENT_MS = 60_000;
/**
 * opencode's first model call comes ~50 s after it starts on a loaded 2-core machine (its TUI, its instance's
 * bootstrap and a scan of the repository's worktrees, measured from its own log at load 15): its waits are
 * agents-opencode's (90 s).
 */
const waitMs = (harness: string) => (harness === 'opencode' ? 90_000 : AGENT_MS);
const SPEC = '---\nscenarios:\n  - { id: cart/total, run: "grep -q total=42 cart.txt" }\n---\n# Cart\n';

/** The exit status of each `<mark>=<status>` line the agent's tool results carried to the fake model. */
function statuses(marks: readonly string[], from: number): (number | undefined)[] {
  const text = bed.fake.requests.slice(from).filter((r) => r.kind === 'tool-result').map((r) => JSON.stringify(r.body).replaceAll('\\n', '\n')).join('\n');
  return marks.map((m) => {
    const all = [...text.matchAll(new RegExp(`\\b${m}=(\\d+)`, 'g'))];
    return all.length ? Number(all.at(-1)![1]) : undefined;
  });
}

/**
 * Waits for `rows`, scripted as one tool call's commands, each printing its mark and status, approving each dialog by name: their statuses.
 * Only results after request `from` count: the fake model is the file's, and an earlier harness's carried the same marks.
 */
async function run(p: AgentProject, id: string, rows: readonly (readonly [string, string])[], tag: string, from: number, harness: string): Promise<number[]> {
  const marks = rows.map((_, i) => `${tag}${i}`);
  const done = () => statuses(marks, from).every((s) => s !== undefined);
  let answered = '';
  await waitFor(`every ${tag} row's status in the tool's result`, async () => {
    if (done()) return true;
    // A dialog on screen (claude's Bash dialog, 2.1.332's auto-mode dialog before it, codex's approval,
    // opencode's, answered through its own API), approved by name once per dialog; the session's wait may come later than its screen.
    const screen = p.screen(id);
    const dialog = /Do you want to proceed\?|Enter to stay in auto mode|Would you like to run the following command\?|Permission required/.exec(screen);
    if (dialog && screen !== answered) {
      const r = await trellis(p.dir, ['session', 'answer', id, 'approve'], { env: p.env });
      if (r.code === 0) answered = screen;
    } else if (harness === 'opencode' && (await p.show(id)).reason === 'permission') {
      // opencode's wait comes from its server, and is answered through it (a second answer to one wait is refused, harmlessly).
      await trellis(p.dir, ['session', 'answer', id, 'approve'], { env: p.env });
    }
    return false;
  }, waitMs(harness)).catch((err: Error) => {
    throw new Error(`${err.message}; the pane shows:\n${p.screen(id)}`);
  });
  return statuses(marks, from) as number[];
}
const line = (rows: readonly (readonly [string, string])[], tag: string) => rows.map(([, command], i) => `(${command}) >/dev/null 2>&1; echo ${tag}${i}=$?`).join('; ');

/** The folder of session `id`'s outer relay (its argv: `<relay> outer <dir> <id> …`), read from /proc. */
function relayDir(id: string): string {
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const at = argv.indexOf('outer');
      if (at > 0 && argv[at - 1]!.endsWith('confine-relay.js') && argv[at + 2] === id) return argv[at + 1]!;
    } catch {
      // Gone meanwhile.
    }
  }
  throw new Error(`no outer relay of session ${id}`);
}

const HARNESSES = [...CLAUDE_VERSIONS.map((v) => ['claude', v] as const), ['codex', CODEX_VERSION] as const, ['opencode', OPENCODE_VERSION] as const];

describe.each(HARNESSES)('a confined %s %s session, driven by the fake model', (harness, version) => {
  it('its tool calls cannot write the main checkout, ~/.ssh, refs or another worktree, read the Trellis home, reach the serve or accept its own check as a person; it commits, runs tests and installs into its worktree', async () => {
    const p = bed.project(harness === 'claude' ? { claudeVersion: version as (typeof CLAUDE_VERSIONS)[number] } : {});
    // opencode on PATH, configured for the fake model and offline (as agents-opencode runs it).
    if (harness === 'opencode') Object.assign(p.env, opencodeHome(bed.fake.url, p.agent.home), { PATH: `${opencodeBinDir()}:${p.env.PATH}` });
    mkdirSync(join(p.dir, 'specs/shop'), { recursive: true });
    writeFileSync(join(p.dir, 'specs/shop/cart.md'), SPEC);
    writeFileSync(join(p.dir, 'cart.txt'), 'total=42\n');
    writeFileSync(join(p.dir, 'trellis.json'), '{}\n');
    git(p.dir, 'add', '-A');
    git(p.dir, 'commit', '-qm', 'cart');
    mkdirSync(join(p.agent.home, '.ssh'), { recursive: true });
    writeFileSync(join(p.agent.home, '.ssh', 'id_test'), 'PRIVATE KEY\n');
    await ok(p.dir, ['eval', 'run', '--by', 'ci'], { env: p.env });
    const serve = await startServe(ROOT, p.dir, p.env);
    try {
      const hub = join(p.home, 'hub.json');
      writeFileSync(hub, '{"secret": "hub-secret-42"}\n');
      const { id: other, worktree: otherTree } = JSON.parse(await ok(p.dir, ['session', 'spawn', 'other', '--harness', 'shell', '--json'], { env: p.env })) as { id: string; worktree: string };
      const api = serve.url.replace(/\/$/, '');
      const post = (path: string, body: string) => `curl -sS -f -m 5 -X POST -H 'content-type: application/json' -d '${body}' ${api}${path}`;
      // Every row but the first (its own commit rewriting its check) must fail; `<id>` is the session's own.
      const refused = (id: string): [string, string][] => [
        ['rewrite its own check and commit it (allowed)', "sed -i s/grep.-q.total=42.cart.txt/true/ specs/shop/cart.md && git commit -qam rewrite"],
        ['write in the main checkout', `echo planted > ${join(p.dir, 'planted.txt')}`],
        ['write ~/.ssh/x', 'echo planted > ~/.ssh/x'],
        ['read $TRELLIS_HOME/hub.json', `grep hub-secret ${hub}`],
        ['curl the serve’s accept route', post(`/api/sessions/${id}/accept`, '{"reason":"r","by":"alice"}')],
        ['curl the serve’s override route', post(`/api/sessions/${id}/merge/override`, '{"reason":"r","by":"alice"}')],
        ['curl the serve’s answer route', post(`/api/sessions/${id}/answer`, '{"choice":"Yes"}')],
        ['curl the serve through the relay’s proxy', `curl -sS -f -m 5 --proxy http://127.0.0.1:3128 ${api}/api/sessions`],
        ['accept its own changed check as alice', `env -u TRELLIS_SESSION ${process.execPath} ${BIN} session accept ${id} --reason reviewed --by alice`],
        // After the person's verdicts: a session log moved to a commit is no log, and would refuse them for that reason.
        ['git update-ref refs/trellis/…', `git update-ref refs/trellis/sessions/${id} HEAD`],
        ['edit another session’s worktree', `echo planted > ${join(otherTree, 'planted.txt')}`],
        ['move another session’s branch', `git update-ref refs/heads/trellis/${other} HEAD`],
      ];
      // The task's turn is the refused rows; its id is known only after the spawn, so the script's command reads it from the environment.
      const rows = refused('"$TRELLIS_SESSION"');
      bed.fake.clearScript();
      bed.fake.script({ tool: 'bash', command: line(rows, 'no') });
      const tip = (ref: string) => git(p.dir, 'rev-parse', '--verify', '--quiet', ref).trim();
      const before = { main: tip('refs/heads/main'), other: tip(`refs/heads/trellis/${other}`) };
      const from = bed.fake.requests.length;
      const view = JSON.parse(await ok(p.dir, ['session', 'spawn', 'Try the rows', '--harness', harness, '--node', 'shop/cart', '--json'], { env: p.env })) as { id: string; worktree: string; confinement: unknown };
      const id = view.id;
      expect(view.confinement).toEqual({ confined: true, by: expect.stringMatching(/^bubblewrap \d+\.\d+.*network only to its provider/) });
      const codes = await run(p, id, rows, 'no', from, harness);
      expect(rows.map(([what], i) => [what, codes[i] === 0 ? 'did it' : 'refused'])).toEqual(rows.map(([what], i) => [what, i === 0 ? 'did it' : 'refused']));

      // Nothing changed: no file planted, no ref but its own branch and its own log moved, no person's decision logged.
      expect([existsSync(join(p.dir, 'planted.txt')), existsSync(join(p.agent.home, '.ssh', 'x')), existsSync(join(otherTree, 'planted.txt'))]).toEqual([false, false, false]);
      expect({ main: tip('refs/heads/main'), other: tip(`refs/heads/trellis/${other}`) }).toEqual(before);
      expect(tip(`refs/trellis/sessions/${id}`)).not.toBe(tip(`refs/heads/trellis/${id}`));
      expect(git(p.dir, 'log', '-1', '--format=%s', `trellis/${id}`).trim()).toBe('rewrite');
      // The only decisions logged are the person's own answers, from the CLI outside the sandbox (each dialog
      // approved by name above, recorded as who answered since issue 43): no acceptance, no override, and no
      // answer through the serve's routes or as alice.
      const decisions = git(p.dir, 'log', '--format=%s', `refs/trellis/sessions/${id}`).split('\n').filter((s) => /accept|overrid|answer/.test(s));
      expect(decisions.filter((s) => !/^answered "[^"]*" from the CLI by /.test(s) || / by alice$/.test(s))).toEqual([]);
      expect(JSON.stringify(bed.fake.requests.filter((r) => r.kind === 'tool-result').map((r) => r.body))).not.toContain('hub-secret-42');
      const check = await trellis(p.dir, ['session', 'check', id], { env: p.env });
      expect([check.code, check.stdout]).toEqual([1, expect.stringContaining('changed        cart/total')]);
      // Its hooks still reach Trellis from inside (through its relay, not the serve): the turn ended by a hook (opencode's: its server read from outside, through the relay).
      // Codex's states come over its app-server, by default confined too (issue 41): the sandbox's server, bridged to the watcher outside.
      await waitFor('the turn to end', async () => (await p.show(id)).reason === 'turn-end', waitMs(harness));
      const channel = harness === 'codex' ? 'protocol' : 'hook';
      await waitFor(`a signal from its ${channel} on its log`, () => p.log(id).some((l) => l.endsWith(` (${channel})`)), waitMs(harness));
      if (harness === 'codex') expect(await p.show(id)).toMatchObject({ channel: 'protocol', source: 'protocol' });
      if (harness === 'claude') {
        // Its command hooks as installed (issue 40) POST to the outer relay with curl: a prompt's signal, then the
        // turn's end, recorded with no Node process started (run here outside, as inside: the relay's folder named the same way).
        const relay = relayDir(id);
        const subjects = () => git(p.dir, 'log', '--format=%s', `refs/trellis/sessions/${id}`).trim().split('\n');
        const before = subjects().length;
        for (const [event, payload] of [
          ['UserPromptSubmit', { hook_event_name: 'UserPromptSubmit', session_id: 'x', prompt: 'go on' }],
          ['Stop', { hook_event_name: 'Stop', session_id: 'x', stop_hook_active: false, last_assistant_message: 'done' }],
        ] as const) {
          const r = await runInstalledHook(view.worktree, event, JSON.stringify(payload), { ...p.env, TRELLIS_SIGNAL_RELAY: join(relay, 'signal.sock') });
          expect(r.command).toMatch(/^sh "\$\{TRELLIS_SIGNAL_RELAY%\/\*\}\/signal\.sh" /);
          expect(r).toMatchObject({ status: 0, stdout: '', stderr: '', nodes: 0 });
        }
        expect(subjects().slice(0, subjects().length - before)).toEqual(['await turn-end (hook)', 'run (hook)']);
      }

      // What it may do: commit on its own branch, run its tests, install a package into its worktree.
      writeFileSync(join(view.worktree, 'package.json'), JSON.stringify({ name: 'w', version: '1.0.0', private: true, scripts: { test: 'node -e "process.exit(require(\'fs\').existsSync(\'cart.txt\') ? 0 : 1)"' } }));
      mkdirSync(join(view.worktree, 'dep'));
      writeFileSync(join(view.worktree, 'dep', 'package.json'), JSON.stringify({ name: 'dep', version: '1.0.0' }));
      const own: [string, string][] = [
        ['commit on its own branch', 'echo node_modules/ > .gitignore && git add -A && git commit -qm own-work'],
        ['run its tests', 'npm test --silent'],
        ['install a package into its worktree', 'npm install --offline --no-audit --no-fund ./dep'],
        ['commit the install', 'git add -A && git commit -qm installed'],
        // Its home is writable in a private folder only: a new dotfile (git would read it as the person's) never reaches the real home.
        ['write a new ~/.gitconfig', "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' > ~/.gitconfig"],
      ];
      bed.fake.script({ tool: 'bash', command: line(own, 'yes') });
      const later = bed.fake.requests.length;
      await ok(p.dir, ['session', 'prompt', id, '--body', 'Now your own work'], { env: p.env });
      expect(await run(p, id, own, 'yes', later, harness)).toEqual([0, 0, 0, 0, 0]);
      expect(existsSync(join(p.agent.home, '.gitconfig'))).toBe(false);
      expect(git(p.dir, 'log', '-2', '--format=%s', `trellis/${id}`).trim().split('\n')).toEqual(['installed', 'own-work']);
      expect(existsSync(join(view.worktree, 'node_modules', 'dep', 'package.json'))).toBe(true);
    } finally {
      await serve.stop();
    }
  }, harness === 'opencode' ? 300_000 : 180_000);
});
