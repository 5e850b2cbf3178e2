import { childProcess } from '../store/lazy-builtins.js';
import { isTrellisError, TrellisError } from '../events/index.js';
import type { SessionView } from '../projections/index.js';
import type { Project } from '../store/compose/open-project.js';
import { openProject } from './open-project.js';
import type { SessionRuntime } from '../store/sessions/verbs/runtime.js';
import {
  closeSession,
  harnessNames,
  interruptSession,
  mergeSession,
  promptSession,
  quarantineSession,
  requestReview,
  resumeSession,
  sessionState,
  showSession,
  spawnSession,
  viewSession,
} from '../store/sessions/verbs/verbs.js';
import { SIGNAL_ACTION } from './session-signal-command.js';
import { LS_ACTION } from './session-ls-command.js';
import { cliRuntime } from './cli-runtime.js';
import { sessionPaneTargets } from '../store/sessions/log/session-panes.js';
import { readBody, resolveAuthor } from './input.js';
import { err, out } from './output.js';
import { problemLines } from './render.js';
import { checkShape, type Shape, type VerbContext } from './shape.js';
import { UsageError } from './usage-error.js';
import { unknownAction, usagesOf } from './unknown-action.js';
import { checksText } from './checks-text.js';
import { logIgnored } from './hook-input.js';
import { reviewText, sessionLine, sessionText, statusLabel, transitionLine } from './session-text.js';

interface ActionSpec extends Shape {
  readonly run: (ctx: VerbContext, p: Project) => Promise<number>;
}

const json = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;
const author = (ctx: VerbContext) => resolveAuthor(ctx.options.by, ctx.cwd);


/** capture and keys: session I/O's handlers, against the panes the session log records. */
async function sessionIo(action: 'capture' | 'keys', ctx: VerbContext, p: Project): Promise<number> {
  const { runSessionIo } = await import('./session-io-commands.js');
  return runSessionIo(action, ctx, sessionPaneTargets(p, cliRuntime(p).tmux.socket));
}

/**
 * A transition's verb, and the line it prints: what was done, then the state only where the words of the
 * deed do not already say it (`closed`, not `closed: closed`; `resumed: running`). `lands` is the state
 * the deed names.
 */
const transition = (name: string, verb: (p: Project, rt: SessionRuntime, id: string, by: string) => Promise<SessionView>, done: string, lands?: string): ActionSpec => ({
  args: ['id'],
  options: ['by', 'json'],
  usage: `trellis session ${name} <id> [--by <author>] [--json]`,
  async run(ctx, p) {
    const s = await verb(p, cliRuntime(p), ctx.args[0]!, author(ctx));
    await out(ctx.options.json ? json(s) : `${transitionLine(s, done, lands)}\n`);
    return 0;
  },
});

export const SESSION_ACTIONS: Record<string, ActionSpec> = {
  spawn: {
    args: ['...task'],
    options: ['harness', 'node', 'issue', 'by', 'json'],
    usage: `trellis session spawn <task> [--harness ${harnessNames().join('|')}] [--node <id>]... [--issue <id>] [--json]`,
    async run(ctx, p) {
      const nodes = ctx.options.node === undefined ? [] : [ctx.options.node].flat().map(String);
      let s: SessionView & { warnings: readonly string[] };
      try {
        s = await spawnSession(p, cliRuntime(p), {
          task: ctx.args.join(' '),
          nodes,
          by: author(ctx),
          ...(ctx.options.harness !== undefined ? { harness: String(ctx.options.harness) } : {}),
          ...(ctx.options.issue !== undefined ? { issue: String(ctx.options.issue) } : {}),
        });
      } catch (e) {
        if (isTrellisError(e) && e.code === 'UNKNOWN_HARNESS') throw new UsageError(e.message, SESSION_ACTIONS.spawn!.usage);
        throw e;
      }
      // Said, never blocking: what the agent's first run will ask, and other live sessions already changing
      // a node this one is linked to (the session itself is spawned either way).
      await err(s.warnings.map((w) => `trellis: warning: ${w}\n`).join(''));
      await out(ctx.options.json ? json(s) : `${s.id}\n`);
      return 0;
    },
  },
  ls: LS_ACTION,
  show: {
    args: ['id'],
    options: ['json'],
    usage: 'trellis session show <id> [--json]',
    async run(ctx, p) {
      const s = await showSession(p, ctx.args[0]!);
      await out(ctx.options.json ? json(s) : sessionText(s));
      return 0;
    },
  },
  prompt: {
    args: ['id'],
    options: ['body', 'by', 'json'],
    usage: 'trellis session prompt <id> [--body <text>|-] [--by <author>] [--json]   (the body from stdin when piped)',
    async run(ctx, p) {
      const body = readBody(ctx.options.body);
      if (body === undefined || body.trim() === '') throw new UsageError('a prompt needs a body: --body <text>, or pipe it in', SESSION_ACTIONS.prompt!.usage);
      // Said at once on stderr when the prompt waits for someone's text to leave the input box.
      const r = await promptSession(p, cliRuntime(p), ctx.args[0]!, body, author(ctx), { onWait: (why) => void err(`${ctx.args[0]}: waiting: ${why}\n`) });
      await out(ctx.options.json ? json(r) : r.delivered ? `${r.session.id} prompted (delivered${r.waited ? ` once the input box was empty; it waited: ${r.waited}` : ''})\n` : `${r.session.id} prompt queued, not delivered: ${r.reason}\n`);
      return 0;
    },
  },
  interrupt: transition('interrupt', interruptSession, 'interrupted', 'interrupted'),
  resume: transition('resume', resumeSession, 'resumed'),
  review: transition('review', (p, _rt, id, by) => requestReview(p, id, by), 'up for review', 'review'),
  close: transition('close', closeSession, 'closed', 'closed'),
  quarantine: transition('quarantine', (p, rt, id, by) => quarantineSession(p, rt, id, by), 'quarantined', 'quarantined'),
  view: transition('view', (p, _rt, id, by) => viewSession(p, id, by), 'viewed'),
  merge: {
    args: ['id'],
    options: ['override', 'by', 'json'],
    usage: 'trellis session merge <id> [--override <reason>] [--by <author>] [--json]   (refused while its checks block it, unless overridden)',
    async run(ctx, p) {
      const override = ctx.options.override === undefined ? undefined : String(ctx.options.override);
      if (override !== undefined && override.trim() === '') throw new UsageError('--override needs a reason', SESSION_ACTIONS.merge!.usage);
      const r = await mergeSession(p, cliRuntime(p), ctx.args[0]!, author(ctx), override, process.env.TRELLIS_SESSION);
      if (r.gate.through === 'overridden') await err(`trellis: merge gate overridden for ${r.gate.scenarios.join(', ')} (logged on the session)\n`);
      await out(ctx.options.json ? json(r) : `merge dispatched to ${ctx.args[0]}'s agent${r.delivered ? '' : ` (prompt queued, not delivered: ${r.reason})`}\n`);
      return 0;
    },
  },
  accept: {
    args: ['id'],
    options: ['reason', 'scenario', 'by', 'json'],
    usage: 'trellis session accept <id> --reason <why> [--scenario <id>]... [--by <author>] [--json]   (a person accepts the new definitions of checks the branch changed)',
    async run(ctx, p) {
      const reason = ctx.options.reason === undefined ? '' : String(ctx.options.reason);
      if (reason.trim() === '') throw new UsageError('--reason is required: say why the new definition is right', SESSION_ACTIONS.accept!.usage);
      const scenarios = ([] as unknown[]).concat(ctx.options.scenario ?? []).map(String);
      const { acceptChecks } = await import('../store/sessions/checks/accept-checks.js');
      const r = await acceptChecks(p, ctx.args[0]!, { reason, scenarios, by: author(ctx), fromSession: process.env.TRELLIS_SESSION });
      await out(ctx.options.json ? json(r) : `accepted for ${r.session}: ${r.accepted.map((d) => `${d.id} (${d.run === null ? 'removed' : `run: ${d.run}`})`).join(', ')}\n`);
      return 0;
    },
  },
  check: {
    args: ['id'],
    options: ['by', 'json'],
    usage: "trellis session check <id> [--by <author>] [--json]   (runs its scenarios in its worktree at its head commit)",
    async run(ctx, p) {
      const { checkSession } = await import('../store/sessions/checks/check-session.js');
      const r = await checkSession(p, ctx.args[0]!, author(ctx));
      await out(ctx.options.json ? json(r) : checksText(r.checks, r.skipped));
      return r.checks.ready ? 0 : 1;
    },
  },
  answer: {
    args: ['...id and choice'],
    options: ['by', 'json'],
    usage: 'trellis session answer <id> <choice>   (the option’s text as on screen, or approve, deny, trust; never a blind key)',
    async run(ctx, p) {
      const [id, ...words] = ctx.args;
      if (!id || words.length === 0) throw new UsageError('missing <choice>', SESSION_ACTIONS.answer!.usage);
      const { answerSession } = await import('../store/sessions/verbs/answer.js');
      const r = await answerSession(p, cliRuntime(p), id, words.join(' '), author(ctx), 'the CLI');
      await out(ctx.options.json ? json(r) : `${r.session.id} answered "${r.chose}": ${statusLabel(r.session)}\n`);
      return 0;
    },
  },
  capture: {
    args: ['...id'],
    options: ['lines', 'ansi', 'json'],
    usage: 'trellis session capture <id> [--lines <n>] [--ansi] [--json]',
    run: (ctx, p) => sessionIo('capture', ctx, p),
  },
  keys: {
    args: ['...id and keys'],
    options: ['hex', 'json'],
    usage: 'trellis session keys <id> <key>...   (Escape, Enter, Tab, Up, C-c, ...; or --hex 1b5b41)',
    run: (ctx, p) => sessionIo('keys', ctx, p),
  },
  attach: {
    args: ['id'],
    options: [],
    usage: 'trellis session attach <id>',
    async run(ctx, p) {
      const s = await sessionState(p, ctx.args[0]!);
      if (!s.tmux) throw new TrellisError('SESSION_REFUSED', `the session is ${s.reason ? `${s.status}{${s.reason}}` : s.status}: it has no tmux session to attach to`);
      const rt = cliRuntime(p);
      const r = childProcess().spawnSync('tmux', ['-S', rt.tmux.socket, 'attach-session', '-t', `=${s.tmux.session}`], { stdio: 'inherit' });
      if (r.error) throw new TrellisError('SPAWN_FAILED', `cannot run tmux: ${r.error.message}`);
      return r.status ?? 1;
    },
  },
  // The command hook: its own module (session-signal-command.ts), which main.ts loads alone.
  signal: SIGNAL_ACTION,
  'watch-opencode': {
    args: ['id', 'launch'],
    options: [],
    usage: 'trellis session watch-opencode <id> <fresh|resume>   (run beside opencode, in its pane or outside its sandbox: records what its server’s event stream says)',
    async run(ctx, p) {
      const launch = ctx.args[1];
      if (launch !== 'fresh' && launch !== 'resume') throw new UsageError(`<launch> is fresh or resume, not '${launch}'`, SESSION_ACTIONS['watch-opencode']!.usage);
      // Started in the agent's pane: its hangup (the pane killed by a quarantine or a close) must not end
      // the watch before what it records is written; the watch ends once the pane is gone.
      process.on('SIGHUP', () => {});
      const [{ watchOpencode }, { signalAndReact }] = await Promise.all([import('../store/sessions/agents/opencode/opencode-watch.js'), import('../store/sessions/verbs/reactions.js')]);
      const [id, rt] = [ctx.args[0]!, cliRuntime(p)];
      await watchOpencode(p, rt, id, {
        resume: launch === 'resume',
        log: (event, ignored) => logIgnored(id, event, ignored),
        signal: (event, payload) => signalAndReact(p, rt, id, event, payload),
      });
      return 0;
    },
  },
  'watch-codex': {
    args: ['id', 'launch'],
    options: [],
    usage: 'trellis session watch-codex <id> <fresh|resume>   (run beside codex in its pane: its own app-server, Trellis as a second client)',
    async run(ctx, p) {
      const launch = ctx.args[1];
      if (launch !== 'fresh' && launch !== 'resume') throw new UsageError(`<launch> is fresh or resume, not '${launch}'`, SESSION_ACTIONS['watch-codex']!.usage);
      // Started in the agent's pane: its hangup must not end the watch before what it records is written.
      process.on('SIGHUP', () => {});
      const [{ watchCodex }, { signalAndReact }] = await Promise.all([import('../store/sessions/agents/codex/codex-watch.js'), import('../store/sessions/verbs/reactions.js')]);
      const [id, rt] = [ctx.args[0]!, cliRuntime(p)];
      await watchCodex(p, rt, id, {
        resume: launch === 'resume',
        log: (line) => process.stderr.write(`${line}\n`),
        signal: (event, payload, how) => signalAndReact(p, rt, id, event, payload, how),
      });
      return 0;
    },
  },
  react: {
    args: ['id'],
    options: [],
    usage: 'trellis session react <id>   (run detached by a hook: the reactions a signal calls for, e.g. the quarantine of repeated turn failures)',
    async run(ctx, p) {
      const { reactToSignal } = await import('../store/sessions/verbs/reactions.js');
      await reactToSignal(p, cliRuntime(p), ctx.args[0]!);
      return 0;
    },
  },
  'watch-screen': {
    args: ['id'],
    options: [],
    usage: 'trellis session watch-screen <id>   (run by the launch: reads the agent’s screen for dialogs no hook announces, and records its command hooks’ signals, while the session lives)',
    async run(ctx, p) {
      // Detached by tmux: a hangup (its session killed) must not end the watch before its last write.
      process.on('SIGHUP', () => {});
      const [{ watchScreens }, { serveOnline }, { mainRoot }, { trellisHome }] = await Promise.all([
        import('../store/sessions/verbs/screen-watcher.js'),
        import('../store/host/serve-online.js'),
        import('../store/sessions/worktrees/worktree.js'),
        import('../store/trellis-home.js'),
      ]);
      // The session's command hooks are recorded here too, while it lives (hook-recorder.ts): no Node process per agent event.
      const { startHookRecorder } = await import('./hook-recorder.js');
      const recorder = await startHookRecorder(p, ctx.args[0]!, ctx.cwd, process.argv[1]!);
      // It stands by while a serve of the project is online (the serve reads the screen then), handing
      // its lease to a waiter of a megabyte or two where GNU tail can wait for the serve's process.
      const { watcherHandOff } = await import('./watcher-hand-off.js');
      await watchScreens(p, cliRuntime(p), ctx.args[0]!, { serve: serveOnline(trellisHome(), mainRoot(p)), handOff: watcherHandOff(ctx.args[0]!) });
      await recorder?.close();
      return 0;
    },
  },
  'watch-setup': {
    args: ['id'],
    options: [],
    usage: 'trellis session watch-setup <id>   (run by the launch: reads the pane for setup dialogs until the agent’s first signal)',
    async run(ctx, p) {
      const { watchSetup } = await import('../store/sessions/verbs/setup-watch.js');
      await watchSetup(p, cliRuntime(p), ctx.args[0]!);
      return 0;
    },
  },
};

/** `trellis session <action> ...`. */
export async function runSession(action: string, ctx: VerbContext): Promise<number> {
  const spec = SESSION_ACTIONS[action];
  if (!spec) throw unknownAction('session', action, usagesOf(SESSION_ACTIONS));
  checkShape(spec, ctx);
  return spec.run(ctx, openProject(ctx.cwd));
}

/** `trellis review <id> [--json]`: the review bundle (unbounded output: flushed, then exit). */
export async function runReview(ctx: VerbContext): Promise<number> {
  checkShape({ args: ['id'], options: ['json'], usage: 'trellis review <id> [--json]' }, ctx);
  const { reviewBundle } = await import('../store/sessions/checks/review.js');
  const bundle = await reviewBundle(openProject(ctx.cwd), ctx.args[0]!);
  await out(ctx.options.json ? `${JSON.stringify(bundle)}\n` : reviewText(bundle));
  return 0;
}
