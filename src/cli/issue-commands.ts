import type { Issue } from '../projections/index.js';
import type { Project } from '../store/compose/open-project.js';
import { openProject } from './open-project.js';
import { actOnReply, editIssue, listIssues, openIssue, promoteIssue, remarkOnIssue, reopenIssue, replyToIssue, showIssue } from '../store/issues/verbs.js';
import { mergedIssues } from '../store/issues/merged-list.js';
import { issueTimeline } from '../store/issues/timeline.js';
import { readBody, resolveAuthor } from './input.js';
import { err, out } from './output.js';
import { issueLines, issueText, noteLines, problemLines, timelineLines } from './render.js';
import { checkShape, type Shape, type VerbContext } from './shape.js';
import { UsageError } from './usage-error.js';
import { unknownAction, usagesOf } from './unknown-action.js';

interface ActionSpec extends Shape {
  readonly run: (ctx: VerbContext, p: Project) => Promise<number>;
}

const json = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;

const printIssue = (ctx: VerbContext, issue: Issue, line: string) => out(ctx.options.json ? json(issue) : line);

const listOptions = (v: unknown): string[] => (v === undefined ? [] : (Array.isArray(v) ? v : [v]).map(String));

function replyNumber(raw: string, usage: string): number {
  if (!/^[0-9]+$/.test(raw) || Number(raw) < 1) throw new UsageError(`reply number must be a whole number from 1, not '${raw}'`, usage);
  return Number(raw);
}

function author(ctx: VerbContext): string {
  return resolveAuthor(typeof ctx.options.by === 'number' ? String(ctx.options.by) : ctx.options.by, ctx.cwd);
}

const replyAction = (action: 'resolve' | 'unresolve' | 'retract', done: string): ActionSpec => {
  const usage = `trellis issue ${action} <id> <n> [--by <author>] [--json]`;
  return {
    args: ['id', 'n'],
    options: ['by', 'json'],
    usage,
    async run(ctx, p) {
      const n = replyNumber(ctx.args[1]!, usage);
      const { issue, changed } = await actOnReply(p, ctx.args[0]!, action, n, author(ctx));
      await printIssue(ctx, issue, changed ? `${done} reply ${n} of ${issue.id}\n` : `reply ${n} of ${issue.id} was already ${done}\n`);
      return 0;
    },
  };
};

export const ISSUE_ACTIONS: Record<string, ActionSpec> = {
  open: {
    args: ['...concern'],
    options: ['node', 'body', 'scenario', 'reading', 'scenarioCheck', 'scenario-check', 'store', 'by', 'json'],
    usage:
      'trellis issue open <concern> [--node <id>]... [--body <text>|-] [--scenario-check <scenario>]... [--store <store>] [--scenario <id> [--reading <r>]] [--by <author>] [--json]',
    async run(ctx, p) {
      const body = readBody(ctx.options.body);
      const { id, issue } = await openIssue(p, {
        concern: ctx.args.join(' '),
        nodes: listOptions(ctx.options.node),
        checks: listOptions(ctx.options.scenarioCheck),
        by: author(ctx),
        ...(body !== undefined ? { body } : {}),
        ...(ctx.options.scenario !== undefined ? { scenario: String(ctx.options.scenario) } : {}),
        ...(ctx.options.reading !== undefined ? { reading: String(ctx.options.reading) } : {}),
        ...(ctx.options.store !== undefined ? { store: String(ctx.options.store) } : {}),
      });
      await out(ctx.options.json ? json(issue) : `${id}\n`);
      return 0;
    },
  },
  reply: {
    args: ['id'],
    options: ['body', 'evidence', 'by', 'json'],
    usage: 'trellis issue reply <id> [--body <text>|-] [--evidence <hash>]... [--by <author>] [--json]',
    async run(ctx, p) {
      const body = readBody(ctx.options.body);
      if (body === undefined) throw new UsageError('a reply needs a body: --body "<text>", or --body - to read it from standard input', ISSUE_ACTIONS.reply!.usage);
      const { issue, reply } = await replyToIssue(p, ctx.args[0]!, { body, evidence: listOptions(ctx.options.evidence), by: author(ctx) });
      await printIssue(ctx, issue, `${reply}\n`);
      return 0;
    },
  },
  remark: {
    args: ['id'],
    options: ['reading', 'body', 'evidence', 'by', 'json'],
    usage: 'trellis issue remark <id> --reading <r> [--body <text>|-] [--evidence <hash>]... [--by <author>] [--json]',
    async run(ctx, p) {
      if (ctx.options.reading === undefined || ctx.options.reading === true) throw new UsageError('remark needs --reading <r>', ISSUE_ACTIONS.remark!.usage);
      const body = readBody(ctx.options.body) ?? '';
      const { issue, reply } = await remarkOnIssue(p, ctx.args[0]!, {
        body,
        reading: String(ctx.options.reading),
        evidence: listOptions(ctx.options.evidence),
        by: author(ctx),
      });
      await printIssue(ctx, issue, `${reply}\n`);
      return 0;
    },
  },
  resolve: replyAction('resolve', 'resolved'),
  unresolve: replyAction('unresolve', 'unresolved'),
  retract: replyAction('retract', 'retracted'),
  edit: {
    args: ['id'],
    options: ['concern', 'body', 'by', 'json'],
    usage: 'trellis issue edit <id> [--concern <text>] [--body <text>|-] [--by <author>] [--json]',
    async run(ctx, p) {
      const usage = ISSUE_ACTIONS.edit!.usage;
      const concern = ctx.options.concern;
      if (concern === true) throw new UsageError('--concern takes the new concern', usage);
      const body = readBody(ctx.options.body);
      if (concern === undefined && body === undefined) throw new UsageError('an edit needs --concern <text> or --body <text> (or both)', usage);
      const { issue, changed } = await editIssue(p, ctx.args[0]!, { by: author(ctx), ...(concern !== undefined ? { concern: String(concern) } : {}), ...(body !== undefined ? { body } : {}) });
      await printIssue(ctx, issue, changed ? `edited ${issue.id}\n` : `${issue.id} already reads so\n`);
      return 0;
    },
  },
  reopen: {
    args: ['id'],
    options: ['by', 'json'],
    usage: 'trellis issue reopen <id> [--by <author>] [--json]',
    async run(ctx, p) {
      const { issue, changed } = await reopenIssue(p, ctx.args[0]!, author(ctx));
      await printIssue(ctx, issue, changed ? `${issue.id} ${issue.status}\n` : `${issue.id} was already open\n`);
      return 0;
    },
  },
  close: {
    args: ['id'],
    options: ['session', 'by', 'json'],
    usage: 'trellis issue close <id> [--session <id>] [--by <author>] [--json]',
    async run(ctx, p) {
      const session = typeof ctx.options.session === 'string' ? ctx.options.session : undefined;
      // The sessions' code (tmux, the agents' adapters) loads for a close only: it may name a session.
      const { closeIssueVerb } = await import('../store/sessions/checks/close-fixed-issue.js');
      const issue = await closeIssueVerb(p, ctx.args[0]!, author(ctx), session);
      await printIssue(ctx, issue, `${issue.id} ${issue.status}\n`);
      return 0;
    },
  },
  promote: {
    args: ['id'],
    options: ['store', 'by', 'json'],
    usage: 'trellis issue promote <id> [--store <forge>] [--by <author>] [--json]',
    async run(ctx, p) {
      const issue = await promoteIssue(p, ctx.args[0]!, author(ctx), ctx.options.store === undefined ? undefined : String(ctx.options.store));
      await printIssue(ctx, issue, `${issue.id} ${issue.status}${issue.url ? ` ${issue.url}` : ''}\n`);
      return 0;
    },
  },
  show: {
    args: ['id'],
    options: ['json'],
    usage: 'trellis issue show <id> [--json]',
    async run(ctx, p) {
      const issue = await showIssue(p, ctx.args[0]!);
      // The text says who edited it last, from the timeline (the Issue itself is the spec's table).
      const edited = ctx.options.json ? undefined : (await issueTimeline(p, issue.id)).events.filter((e) => e.type === 'edited').at(-1);
      await printIssue(ctx, issue, issueText(issue, edited));
      return 0;
    },
  },
  timeline: {
    args: ['id'],
    options: ['json'],
    usage: 'trellis issue timeline <id> [--json]',
    async run(ctx, p) {
      const timeline = await issueTimeline(p, ctx.args[0]!);
      if (!ctx.options.json) await err(noteLines(timeline.notes));
      await out(ctx.options.json ? json(timeline) : timelineLines(timeline));
      return 0;
    },
  },
  ls: {
    args: [],
    options: ['node', 'store', 'all', 'json'],
    usage: 'trellis issue ls [--node <id>] [--store <store>] [--all] [--json]',
    async run(ctx, p) {
      const { issues, problems, notes } = await listIssues(p, {
        ...(ctx.options.node !== undefined ? { node: String(ctx.options.node) } : {}),
        ...(ctx.options.store !== undefined ? { store: String(ctx.options.store) } : {}),
        all: ctx.options.all === true,
      });
      await err(problemLines(problems) + noteLines(notes));
      // Compact JSON for lists: they grow with the project (13 MB for 10,000 threads).
      await out(ctx.options.json ? `${JSON.stringify(issues)}\n` : issueLines(issues));
      return 0;
    },
  },
};

/** `trellis issue <action> ...`: checks the action's arguments and options, then runs it. */
export async function runIssue(action: string, ctx: VerbContext): Promise<number> {
  const spec = ISSUE_ACTIONS[action];
  if (!spec) throw unknownAction('issue', action, usagesOf(ISSUE_ACTIONS));
  checkShape(spec, ctx);
  return spec.run(ctx, openProject(ctx.cwd));
}

/** `trellis issues [--json]`: the whole merged list, every status. */
export async function runIssues(ctx: VerbContext): Promise<number> {
  const usage = 'trellis issues [--json]';
  checkShape({ args: [], options: ['json'], usage }, ctx);
  const { issues, problems, notes } = await mergedIssues(openProject(ctx.cwd));
  await err(problemLines(problems) + noteLines(notes));
  // Compact JSON: this is the unbounded dump scripts pipe into parsers.
  await out(ctx.options.json ? `${JSON.stringify(issues)}\n` : issueLines(issues));
  return 0;
}
