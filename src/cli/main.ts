/**
 * The `trellis` command line. Every command is declared here; handlers load lazily so a verb pays only
 * for what it uses. Exit codes are decided in one place: 0 success, 1 failure, 2 misuse (DESIGN.md §6).
 */
import { cac, type Command } from 'cac';
import { packageRoot } from '../store/package-root.js';
import { setMachineOutput } from './output.js';
import { reportError } from './report-error.js';
import { UsageError, usageLines } from './usage-error.js';

type Handler = () => Promise<number>;
type Options = Record<string, unknown>;

// cac's parser drops a lone `-`, the conventional name of standard input; carry it through in disguise.
const DASH = '\u0000-';
const restoreDash = <T>(v: T): T | string => (v === DASH ? '-' : v);

/**
 * Each multi-action command's actions, for its --help. Kept here (the handlers load lazily); a test checks
 * that these name exactly the actions each command's handler accepts.
 */
export const ACTIONS: Record<string, readonly (readonly [string, string])[]> = {
  issue: [
    ['open <concern>', 'open an issue (--node, --body, --store, --scenario-check)'],
    ['reply <id>', 'reply (--body <text>, or --body - for standard input)'],
    ['remark <id>', 'a remark against a reading (--reading, --body)'],
    ['resolve <id> <n>', 'mark remark n resolved'],
    ['unresolve <id> <n>', 'mark remark n unresolved'],
    ['retract <id> <n>', 'retract reply n (it stays, greyed)'],
    ['edit <id>', 'change the concern (--concern) or body (--body); every version stays in git'],
    ['reopen <id>', 'reopen a landed local issue'],
    ['close <id>', 'close (a local issue lands)'],
    ['promote <id>', 'move a local issue to a forge (--store)'],
    ['show <id>', 'the whole thread'],
    ['timeline <id>', 'who opened, edited, closed, reopened or promoted it, and when (a forge issue: from its forge)'],
    ['ls', 'open issues (--all, --node, --store)'],
  ],
  session: [
    ['spawn <task>', 'start an agent session (--harness, --node, --issue)'],
    ['ls', 'open sessions (--all for closed ones too)'],
    ['show <id>', 'state, worktree, timeline'],
    ['prompt <id>', 'send a prompt (--body)'],
    ['interrupt <id>', 'stop the agent, keep the session'],
    ['resume <id>', 'resume an interrupted session'],
    ['review <id>', 'ask for review'],
    ['close <id>', 'end it (uncommitted work is saved on a ref)'],
    ['quarantine <id>', 'hold it aside'],
    ['view <id>', 'mark its output read'],
    ['merge <id>', 'have the agent merge its branch (gated on its checks; --override <reason>)'],
    ['accept <id>', 'accept the new definitions of checks its branch changed (--reason; a person, never the session)'],
    ['check <id>', "run the session's checks in its worktree at its head commit"],
    ['answer <id> <choice>', 'answer the dialog on screen by its option (approve, deny, trust, or the text)'],
    ['capture <id>', 'what the pane shows (--lines, --ansi)'],
    ['keys <id> <key>...', 'raw keys (--hex for bytes)'],
    ['attach <id>', 'attach this terminal to its tmux pane'],
    ['signal <id> <event>', 'what an agent hook reports'],
    ['watch-opencode <id> <fresh|resume>', "run beside an opencode session's agent: records what its server's event stream says"],
    ['watch-codex <id> <fresh|resume>', "run beside codex in its pane: its own app-server, Trellis a second client"],
    ['react <id>', 'run detached by a hook: the quarantine a signal calls for, outside the agent'],
    ['watch-screen <id>', "run by the launch: reads a live agent's screen for dialogs no hook announces, and records its command hooks"],
    ['watch-setup <id>', "run by the launch: reads a starting agent's pane for setup dialogs"],
  ],
  eval: [
    ['run [<scenario>...]', 'run scenarios and file readings (--scope)'],
    ['record <scenario>', 'file a reading measured elsewhere (--outcome)'],
    ['ls', 'the scoreboard'],
    ['show <scenario>', 'one scenario in one scope'],
    ['remark <thread>', 'an eval-remark thread'],
    ['reply <thread>', 'reply to an eval remark'],
  ],
  evidence: [
    ['put <file|->', 'store a file; prints its hash'],
    ['get <hash>', 'print stored evidence (--range)'],
  ],
};

/** Builds a fresh parser (tests build one per parse) and returns the handler argv selects. */
export function parse(argv: readonly string[], cwd: string): { handler: Handler | undefined } {
  const cli = cac('trellis');
  let handler: Handler | undefined;
  const ctx = (args: readonly string[], options: Options) => {
    // Machine output is written byte for byte; everything else is escaped for the terminal (terminalText).
    setMachineOutput(options.json === true || options.ansi === true);
    return {
      cwd,
      // Whatever follows `--` is text, never an option (`trellis session spawn -- --a-task-with-dashes`).
      args: [...args, ...((options['--'] as readonly string[] | undefined) ?? [])].map((a) => String(restoreDash(a))),
      options: Object.fromEntries(Object.entries(options).map(([k, v]) => [k, Array.isArray(v) ? v.map(restoreDash) : restoreDash(v)])),
    };
  };
  const lazy = <M>(load: () => Promise<M>, run: (m: M) => Promise<number>) => {
    handler = async () => run(await load());
  };
  const issueCommands = () => import('./issue-commands.js');
  const projectCommands = () => import('./project-commands.js');
  const boardCommand = () => import('./board-command.js');

  cli
    .command('serve [action]', 'Serve this project’s API and dashboard (outside a Trellis project: the demo project, kept between runs); `serve ui` pairs it with the dashboard')
    .option('--port <port>', 'Port to listen on (default 8787; 0 picks a free one)')
    .option('--host <host>', 'Address to bind (default 127.0.0.1)')
    .option('--public', 'Put a password-gated gateway on the public port; the raw API moves to a loopback port')
    .option('--fresh', 'Outside a project: a new copy of the demo project (the old one is set aside)')
    .action((action: string | undefined, options: Options) =>
      action === 'ui'
        ? lazy(() => import('./serve-ui-command.js'), (m) => m.runServeUi(ctx([], options)))
        : lazy(() => import('./serve-command.js'), (m) => m.runServe(ctx(action === undefined ? [] : [action], options))),
    );

  cli
    .command('dashboard [action]', 'The host gateway: every project on this machine (`dashboard password` sets the admin password)')
    .option('--port <port>', 'Port to listen on (default 8700; 0 picks a free one)')
    .option('--host <host>', 'Address to bind (default 127.0.0.1; any other needs an admin password)')
    .option('--tls-cert <file>', 'Serve HTTPS with this certificate (PEM)')
    .option('--tls-key <file>', 'The certificate’s private key (PEM)')
    .action((action: string | undefined, options: Options) => lazy(() => import('./dashboard-command.js'), (m) => m.runDashboard(action, ctx([], options))));

  cli
    .command('hosts [action] [...args]', 'Other machines the dashboard reaches over SSH: ls, add <name> <ssh-destination>, rm <name>')
    .usage('hosts [ls|add|rm] [...args] [options]   (see docs/hosts.md)')
    .option('--trellis <command>', 'add: how to run Trellis on that host (default trellis)')
    .option('--ssh-config <file>', 'add: pass this file to ssh as -F')
    .option('--json', 'Print JSON')
    .action((action: string | undefined, args: string[], options: Options) => lazy(() => import('./hosts-commands.js'), (m) => m.runHosts(action, ctx(args, options))));

  cli
    .command('projects [action] [...args]', 'The projects this machine knows (the dashboard’s list): ls, add [<path>], rm <id|path>, serve <id>')
    .usage('projects [ls|add|rm|serve] [...args] [options]   (see docs/cli.md)')
    .option('--git', 'add: run git init first when the folder is not a git repository')
    .option('--init', 'add: run trellis init in the project')
    .option('--harness <name>', 'add: run trellis init recording this agent harness')
    .option('--records', 'ls --json: each online project with its verified endpoint record (what another host’s dashboard tunnels to)')
    .option('--json', 'Print JSON')
    .action((action: string | undefined, args: string[], options: Options) => lazy(() => import('./projects-commands.js'), (m) => m.runProjects(action, ctx(args, options))));

  cli
    .command('status', 'Is this project’s backend online? (through its endpoint record, verified live)')
    .option('--json', 'Print JSON')
    .action((options: Options) => lazy(() => import('./status-command.js'), (m) => m.runStatus(ctx([], options))));

  cli
    .command('issue <action> [...args]', 'Issue threads: open, reply, remark, resolve, unresolve, retract, edit, reopen, close, promote, show, timeline, ls')
    .usage('issue <action> [...args] [options]   (see docs/cli.md for each action)')
    .option('--node <id>', 'Spec node the issue is bound to (repeatable)', { type: [String] })
    .option('--body <text>', "Body text; '-' reads standard input")
    .option('--concern <text>', 'edit: the new concern')
    .option('--evidence <hash>', 'Evidence hash to attach (repeatable)', { type: [String] })
    .option('--reading <r>', 'The reading a remark was authored against')
    .option('--scenario <id>', 'Open an eval-remark thread scoped to this scenario')
    .option('--scenario-check <id>', 'open: a scenario that must pass for the work on the issue to count (repeatable)', { type: [String] })
    .option('--store <store>', 'Store to open in or list from (default local)')
    .option('--session <id>', 'close: the session whose change, merged into trunk, closes it (named in the timeline)')
    .option('--by <author>', 'Author (default: $TRELLIS_SESSION, else git user.name)')
    .option('--all', 'ls: include issues that are no longer open')
    .option('--json', 'Print JSON')
    .action((action: string, args: string[], options: Options) => lazy(issueCommands, (m) => m.runIssue(action, ctx(args, options))));

  cli
    .command('session <action> [...args]', 'Agent sessions: spawn, ls, show, prompt, capture, keys, answer, interrupt, resume, review, merge, check, accept, close, quarantine, view, attach, signal')
    .usage('session <action> [...args] [options]   (see docs/cli.md for each action)')
    .option('--harness <name>', 'spawn: the agent harness (shell, claude, codex, opencode, gemini)')
    .option('--node <id>', 'spawn: spec node the session works on (repeatable)', { type: [String] })
    .option('--issue <id>', 'spawn: the issue the session works on')
    .option('--body <text>', "prompt: the prompt; '-' reads standard input")
    .option('--by <author>', 'Author (default: $TRELLIS_SESSION, else git user.name)')
    .option('--all', 'ls: include closed sessions')
    .option('--lines <n>', 'capture: the last n lines, scrollback included')
    .option('--ansi', 'capture: keep colors (SGR sequences)')
    .option('--hex <bytes>', 'keys: send these bytes exactly, as hex')
    .option('--override <reason>', 'merge: go past the checks that block it, saying why (logged on the session)')
    .option('--reason <why>', 'accept: why the changed checks\' new definitions are right (logged on the session)')
    .option('--scenario <id>', 'accept: a changed check to accept (repeatable; default: every one waiting)', { type: [String] })
    .option('--json', 'Print JSON')
    .action((action: string, args: string[], options: Options) =>
      // The command hook (every agent event with no serve) loads its own verb, not every session verb.
      // Listing loads only the log's read, not the verbs that launch and deliver (their tmux and adapters).
      action === 'signal'
        ? lazy(() => import('./session-signal-command.js'), (m) => m.runSignal(ctx(args, options)))
        : action === 'ls'
          ? lazy(() => import('./session-ls-command.js'), (m) => m.runSessionLs(ctx(args, options)))
          : lazy(() => import('./session-commands.js'), (m) => m.runSession(action, ctx(args, options))),
    );

  cli
    .command('review <id>', 'A session’s review bundle: commits, diffs, changed nodes, merge pre-flight')
    .option('--json', 'Print JSON')
    .action((id: string, options: Options) => lazy(() => import('./session-commands.js'), (m) => m.runReview(ctx([id], options))));

  cli
    .command('issues [action] [...args]', 'The whole merged issue list, every status; `issues export`, `issues import <file|->` (NDJSON)')
    .option('--json', 'Print the list as JSON')
    .option('--all', 'export: eval-remark threads too')
    .action((action: string | undefined, args: string[], options: Options) =>
      action === undefined
        ? lazy(issueCommands, (m) => m.runIssues(ctx([], options)))
        : lazy(() => import('./ndjson-commands.js'), (m) => m.runIssuesAction(action, ctx(args, options))),
    );

  cli
    .command('sync [remote]', 'Fetch, merge and push issue, session and eval logs (refs/trellis/*) with a git remote (default origin)')
    .option('--push-only', 'Only push (a remote that moved is reported, not merged)')
    .option('--fetch-only', 'Only fetch and merge')
    .option('--json', 'Print the summary as JSON')
    .action((remote: string | undefined, options: Options) => lazy(() => import('./sync-commands.js'), (m) => m.runSync(ctx(remote === undefined ? [] : [remote], options))));

  cli
    .command('cost', "What the sessions' model use cost: tokens and dollars from the agents' own records, by session, issue, node or day")
    .option('--by <group>', 'session (default), issue, node or day')
    .option('--since <when>', 'only use since a date (2026-11-01), an instant, a span back (7d, 12h), today or week (since Monday, UTC)')
    .option('--json', 'Print the report as JSON, with the exact dollars (the text rounds to the cent: $0.42, < $0.01)')
    .action((options: Options) => lazy(() => import('./cost-command.js'), (m) => m.runCost(ctx([], options))));

  cli
    .command('eval <action> [...args]', 'Eval scenarios: run, record, ls (the scoreboard), show; remark threads: remark, reply')
    .usage('eval <action> [...args] [options]   (see docs/cli.md for each action)')
    .option('--scope <s>', 'trunk (default), a session id, or a linked worktree\'s branch')
    .option('--outcome <o>', 'record: pass, fail or error')
    .option('--score <n>', 'record: a number the measurement scored')
    .option('--evidence <hash>', 'record: evidence hash of the measurement\'s output; reply: evidence to attach')
    .option('--body <text>', "reply: body text; '-' reads standard input")
    .option('--by <author>', 'Author (default: $TRELLIS_SESSION, else git user.name)')
    .option('--json', 'Print JSON')
    .action((action: string, args: string[], options: Options) => lazy(() => import('./eval-commands.js'), (m) => m.runEval(action, ctx(args, options))));

  cli
    .command('evidence <action> [...args]', 'Content-addressed evidence: put <file|->, get <hash>')
    .option('--range <start-end>', 'get: only these bytes (inclusive)')
    .option('--json', 'put: print {hash, size}')
    .action((action: string, args: string[], options: Options) => lazy(() => import('./evidence-commands.js'), (m) => m.runEvidence(action, ctx(args, options))));

  cli
    .command('graph', 'The board as JSON, byte for byte what GET /api/graph answers')
    .option('--json', 'Print JSON (the only format)')
    .action((options: Options) => lazy(boardCommand, (m) => m.runGraph(ctx([], options))));

  cli
    .command('board', 'The board as a readable tree')
    .option('--json', 'Print the board as JSON instead')
    .action((options: Options) => lazy(boardCommand, (m) => m.runBoard(ctx([], options))));

  cli
    .command('init', 'Set this folder up as a Trellis project (idempotent)')
    .option('--harness <name>', 'Record the agent harness this project uses (e.g. claude; auto: the first agent installed, else shell, at each spawn)')
    .option('--git', 'Run git init first when the folder is not a git repository')
    .action((options: Options) => lazy(projectCommands, (m) => m.runInit(ctx([], options))));

  cli
    .command('doctor', 'Check the repository, config, spec tree, locks and caches; each finding with its repair')
    .option('--repair', 'Repair what it can: pack loose objects and refs (git gc)')
    .option('--json', 'Print findings as JSON')
    .action((options: Options) => lazy(projectCommands, (m) => m.runDoctor(ctx([], options))));

  cli
    .command('guidance', 'The guidance catalog (the same as GET /api/guidance)')
    .option('--json', 'Print JSON')
    .action((options: Options) => lazy(projectCommands, (m) => m.runGuidance(ctx([], options))));

  cli.usage('<command> [options]');
  // `trellis issue --help` (and session, eval, evidence) lists the command's actions, not only its options.
  cli.help((sections) => {
    const actions = ACTIONS[cli.matchedCommand?.name.split(' ')[0] ?? ''];
    if (!actions) return sections;
    const width = Math.max(...actions.map(([a]) => a.length));
    const body = actions.map(([a, what]) => `  ${a.padEnd(width)}  ${what}`).join('\n');
    const at = sections.findIndex((x) => x.title === 'Options');
    sections.splice(at < 0 ? sections.length : at, 0, { title: 'Actions', body });
    return sections;
  });
  cli.version(packageRoot().version);
  let parsed;
  try {
    parsed = cli.parse(['node', 'trellis', ...argv.map((a) => (a === '-' ? DASH : a))], { run: true });
  } catch (e) {
    if (!(e instanceof Error && e.name === 'CACError')) throw e;
    // Unknown option, missing option value: misuse, one line answered with the usage of the verb as typed
    // (`issue ls --bogus`: the usage of `issue ls`, not of every issue action).
    const command = cli.matchedCommand;
    const at = command ? argv.indexOf(command.name) : -1;
    const action = at >= 0 && argv[at + 1] !== undefined && !argv[at + 1]!.startsWith('-') ? argv[at + 1] : undefined;
    return {
      handler: async () => {
        const { didYouMean, nearestIds } = await import('../projections/nearest-names.js');
        // cac names the option camel-cased (`--pushOnyl`); say it as it was typed (`--push-onyl`).
        const named = /^Unknown option `(.+)`$/.exec(e.message)?.[1];
        const plain = (o: string) => o.split('=')[0]!.replace(/-/g, '').toLowerCase();
        const unknown = named && (argv.find((a) => a.startsWith('-') && plain(a) === plain(named))?.split('=')[0] ?? named);
        const known = command ? [...command.options, ...cli.globalCommand.options].map((o) => o.rawName.split(/[ ,]/)[0]!) : [];
        const message = unknown ? `unknown option '${unknown}'${didYouMean(nearestIds(unknown, known, 2))}` : e.message;
        throw new UsageError(message, command ? await usageOf(command, action) : 'trellis <command> [options]');
      },
    };
  }
  if (!handler && !(parsed.options.help || parsed.options.version)) {
    const word = parsed.args[0];
    handler =
      word === undefined
        ? async () => (await import('./status-command.js')).bareTrellis(cwd, () => cli.outputHelp())
        : async () => {
            const { didYouMean, nearestIds } = await import('../projections/nearest-names.js');
            const near = didYouMean(nearestIds(word, cli.commands.map((c) => c.name), 2));
            throw new UsageError(`unknown command '${word}'${near}`, 'trellis <command> [options]   (trellis --help lists the commands)');
          };
  }
  return { handler };
}

/** A command's actions and each one's usage line, for the commands that have actions (loaded when misused). */
async function actionUsages(command: string): Promise<Readonly<Record<string, string>> | undefined> {
  const { usagesOf } = await import('./unknown-action.js');
  if (command === 'issue') return usagesOf((await import('./issue-commands.js')).ISSUE_ACTIONS);
  if (command === 'session') return usagesOf((await import('./session-commands.js')).SESSION_ACTIONS);
  if (command === 'eval') return usagesOf((await import('./eval-commands.js')).EVAL_ACTIONS);
  if (command === 'hosts') return (await import('./hosts-commands.js')).USAGE;
  if (command === 'projects') return (await import('./projects-commands.js')).USAGE;
  if (command === 'evidence') return (await import('./evidence-commands.js')).EVIDENCE_USAGES;
  return undefined;
}

/** The usage of the verb as typed: the action's own line, else every action's, else the command's options. */
async function usageOf(command: Command, action: string | undefined): Promise<string> {
  const usages = await actionUsages(command.name);
  if (usages) return action !== undefined && Object.hasOwn(usages, action) ? usages[action]! : usageLines(Object.values(usages));
  return `trellis ${[command.rawName, ...command.options.map((o) => `[${o.rawName}]`)].join(' ')}`;
}

/** Runs one command line to completion and returns its exit code. */
export async function main(argv: readonly string[], cwd: string): Promise<number> {
  try {
    const { handler } = parse(argv, cwd);
    return handler ? await handler() : 0;
  } catch (e) {
    return reportError(e);
  }
}
