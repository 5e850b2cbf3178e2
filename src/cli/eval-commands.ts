import { isOutcome, OUTCOMES, scenarioOfKey, type Reading } from '../events/index.js';
import type { Scoreboard } from '../projections/index.js';
import { predatesWords } from '../projections/scoreboard.js';
import { replyToRemark, showRemark } from '../store/eval/remarks.js';
import { evalDetail, recordReading, runScenarios, scoreboard, type EvalDetail } from '../store/eval/verbs.js';
import type { Project } from '../store/compose/open-project.js';
import { openProject } from './open-project.js';
import { readBody, resolveAuthor } from './input.js';
import { err, out } from './output.js';
import { checkShape, type Shape, type VerbContext } from './shape.js';
import { UsageError } from './usage-error.js';
import { unknownAction, usagesOf } from './unknown-action.js';

interface ActionSpec extends Shape {
  readonly run: (ctx: VerbContext, p: Project) => Promise<number>;
}

const author = (ctx: VerbContext): string => resolveAuthor(typeof ctx.options.by === 'number' ? String(ctx.options.by) : ctx.options.by, ctx.cwd);
const scopeOf = (ctx: VerbContext): string | undefined => (ctx.options.scope === undefined ? undefined : String(ctx.options.scope));

const readingLine = (r: Reading): string =>
  `${r.scenario}  ${r.scope}  ${r.outcome}${r.score !== undefined ? ` (${r.score})` : ''}  ${r.durationMs} ms  reading ${r.id}${r.output ? `  output ${r.output}` : ''}\n`;

export const EVAL_ACTIONS: Record<string, ActionSpec> = {
  run: {
    args: [],
    options: ['scope', 'by', 'json'],
    usage: 'trellis eval run [<scenario>...] [--scope <s>] [--by <author>] [--json]',
    async run(ctx, p) {
      const readings = await runScenarios(p, { scenarios: ctx.args, by: author(ctx), ...(scopeOf(ctx) !== undefined ? { scope: scopeOf(ctx)! } : {}) });
      await out(ctx.options.json ? `${JSON.stringify(readings, null, 2)}\n` : readings.map(readingLine).join('') || 'no scenarios declared in this scope\n');
      return 0;
    },
  },
  record: {
    args: ['scenario'],
    options: ['outcome', 'score', 'scope', 'evidence', 'by', 'json'],
    usage: `trellis eval record <scenario> --outcome ${OUTCOMES.join('|')} [--score <n>] [--scope <s>] [--evidence <hash>] [--by <author>] [--json]`,
    async run(ctx, p) {
      const usage = EVAL_ACTIONS.record!.usage;
      const outcome = ctx.options.outcome;
      if (!isOutcome(outcome)) throw new UsageError(`--outcome must be one of ${OUTCOMES.join(', ')}${outcome === undefined ? '' : `, not '${String(outcome)}'`}`, usage);
      let score: number | undefined;
      if (ctx.options.score !== undefined) {
        score = Number(ctx.options.score);
        if (typeof ctx.options.score === 'boolean' || String(ctx.options.score).trim() === '' || !Number.isFinite(score)) throw new UsageError(`--score must be a number, not '${String(ctx.options.score)}'`, usage);
      }
      const evidence = ctx.options.evidence;
      if (Array.isArray(evidence) && evidence.length > 1) throw new UsageError('--evidence takes one hash for a reading (its output)', usage);
      const hash = Array.isArray(evidence) ? evidence[0] : evidence;
      const reading = await recordReading(p, ctx.args[0]!, {
        outcome,
        by: author(ctx),
        ...(score !== undefined ? { score } : {}),
        ...(scopeOf(ctx) !== undefined ? { scope: scopeOf(ctx)! } : {}),
        ...(hash !== undefined ? { evidence: String(hash) } : {}),
      });
      await out(ctx.options.json ? `${JSON.stringify(reading, null, 2)}\n` : `${reading.id}\n`);
      return 0;
    },
  },
  ls: {
    args: [],
    options: ['json'],
    usage: 'trellis eval ls [--json]',
    async run(ctx, p) {
      const board = await scoreboard(p);
      await err(board.problems.map((q) => `trellis: the readings of ${scenarioOfKey(q.id)} are unreadable (${q.ref} at ${q.commit}): ${q.reason}; inspect with 'git log ${q.ref}'\n`).join(''));
      // Compact JSON: the scoreboard grows with scenarios × scopes and is piped into parsers.
      await out(ctx.options.json ? `${JSON.stringify(board)}\n` : scoreboardText(board));
      return 0;
    },
  },
  show: {
    args: ['scenario'],
    options: ['scope', 'json'],
    usage: 'trellis eval show <scenario> [--scope <s>] [--json]',
    async run(ctx, p) {
      const detail = await evalDetail(p, ctx.args[0]!, scopeOf(ctx));
      await out(ctx.options.json ? `${JSON.stringify(detail, null, 2)}\n` : detailText(detail));
      return 0;
    },
  },
  remark: {
    args: ['thread'],
    options: ['json'],
    usage: 'trellis eval remark <thread> [--json]',
    async run(ctx, p) {
      const t = await showRemark(p, ctx.args[0]!);
      const text = [`${t.id}  ${t.status}  ${t.scenario}${t.reading ? ` reading ${t.reading}` : ''}  ${t.concern}`, `by ${t.by} · originator ${t.originator} · ${t.created}`, ...(t.body ? ['', t.body] : []), ...t.replies.map((r, i) => `\n#${i + 1} ${r.by} · ${r.at}\n${r.body}`)];
      await out(ctx.options.json ? `${JSON.stringify(t, null, 2)}\n` : `${text.join('\n')}\n`);
      return 0;
    },
  },
  reply: {
    args: ['thread'],
    options: ['body', 'evidence', 'by', 'json'],
    usage: 'trellis eval reply <thread> [--body <text>|-] [--evidence <hash>]... [--by <author>] [--json]',
    async run(ctx, p) {
      const evidence = ctx.options.evidence === undefined ? [] : (Array.isArray(ctx.options.evidence) ? ctx.options.evidence : [ctx.options.evidence]).map(String);
      const r = await replyToRemark(p, ctx.args[0]!, { body: readBody(ctx.options.body) ?? '', evidence, by: author(ctx) });
      await out(ctx.options.json ? `${JSON.stringify(r, null, 2)}\n` : `${r.reply}${r.loopedIn ? ` (looped in ${r.loopedIn})` : ''}\n`);
      return 0;
    },
  },
};

function scoreboardText(board: Scoreboard): string {
  if (board.scenarios.length === 0) return "no scenarios declared (add 'scenarios: [{ id, run }]' to a spec node's front matter)\n";
  const lines: string[] = [];
  for (const s of board.scenarios) {
    lines.push(`${s.id}  [${s.node ?? 'declared nowhere live'}]${s.remarks.length ? `  ${s.remarks.length} ${s.remarks.length === 1 ? 'remark' : 'remarks'}` : ''}\n`);
    for (const c of s.cells) {
      const latest = c.latest ? `${c.latest.outcome}  ${c.latest.at}  reading ${c.latest.id}` : 'unmeasured';
      const head = board.scopes.find((x) => x.name === c.scope)?.head;
      const flags = [c.live ? '' : 'gone', c.declared ? '' : 'not declared here', predatesWords(c, head) ?? ''].filter(Boolean).join(', ');
      lines.push(`  ${c.scope.padEnd(16)} ${latest}  last ${c.last.join(' ') || '-'}${c.remarks.length ? `  ${c.remarks.length} ${c.remarks.length === 1 ? 'remark' : 'remarks'}` : ''}${flags ? `  (${flags})` : ''}\n`);
    }
  }
  return lines.join('');
}

function detailText(d: EvalDetail): string {
  const lines = [`${d.scenario} in ${d.scope}: ${d.state}`];
  if (d.fallback) lines.push(`fallback to ${d.fallback}: ${d.reason}`);
  if (d.problem) lines.push(`problem: ${d.problem}`);
  if (d.declaration) lines.push(`declared by ${d.declaration.node} in ${d.declaredIn.join(', ')}: ${d.declaration.run} (timeout ${d.declaration.timeoutS} s)`);
  if (!d.declaration) lines.push(`declared nowhere live; readings kept in ${d.measuredIn.join(', ')}`);
  if (d.reading) lines.push(`latest: ${d.reading.outcome} at ${d.reading.at} by ${d.reading.by}, reading ${d.reading.id}${d.reading.output ? `, output ${d.reading.output}` : ''}`);
  if (d.last.length) lines.push(`last: ${d.last.join(' ')}`);
  for (const r of d.remarks) lines.push(`remark ${r.thread}: ${r.concern} (by ${r.by}${r.reading ? `, on reading ${r.reading}` : ''})`);
  return `${lines.join('\n')}\n`;
}

/** `trellis eval <action> ...`: checks the action's arguments and options, then runs it. */
export async function runEval(action: string, ctx: VerbContext): Promise<number> {
  const spec = EVAL_ACTIONS[action];
  if (!spec) throw unknownAction('eval', action, usagesOf(EVAL_ACTIONS));
  if (action === 'run') {
    // Any number of scenario ids; the shape checks the options only.
    checkShape({ ...spec, args: ctx.args.map(String) }, ctx);
  } else checkShape(spec, ctx);
  return spec.run(ctx, openProject(ctx.cwd));
}
