import { Hono, type Context } from 'hono';
import { TrellisError } from '../../events/index.js';
import { replyToRemark, showRemark } from '../../store/eval/remarks.js';
import { evalDetail, recordReading, runScenarios, scoreboard, type EvalSources } from '../../store/eval/verbs.js';
import { bodySchema, readJson } from '../body.js';
import type { AppContext } from '../context.js';
import { route } from '../route-table.js';
import { requestAuthor } from '../author.js';

// Undeclared keys are refused, so a misspelt field is an error rather than silently ignored. The outcome
// is checked by the verb, so an outcome outside pass|fail|error gets the same message as on the CLI.
const readingBody = bodySchema((type) => type({
  '+': 'reject',
  outcome: 'string',
  'score?': 'number',
  'scope?': 'string',
  'evidence?': 'string',
  'durationMs?': 'number >= 0',
  'by?': 'string',
}));

const runBody = bodySchema((type) => type({ '+': 'reject', 'scope?': 'string', 'by?': 'string' }));

const replyBody = bodySchema((type) => type({ '+': 'reject', body: 'string', 'evidence?': 'string[]', 'by?': 'string' }));


/**
 * Eval routes (DESIGN.md §12), thin calls of the verbs `trellis eval ...` runs. Scenario ids contain
 * slashes: they are taken literally or percent-encoded (/api/eval/checkout/pays, /api/eval/checkout%2Fpays).
 *   GET  /api/eval                          the scoreboard
 *   GET  /api/eval/<scenario>?scope=<s>     the detail (measured | unmeasured | absent-from-trunk, fallback)
 *   POST /api/eval/<scenario>/readings      file a reading { outcome, score?, scope?, evidence?, durationMs?, by? }
 *   POST /api/eval/<scenario>/run           run it now in a scope's worktree { scope?, by? }; 201 with the reading
 *   GET  /api/eval-remarks/:id              an eval-remark thread (never under /api/issues)
 *   POST /api/eval-remarks/:id/reply        reply { body, evidence?, by? }; loops in the reading's filer
 */
export function evalRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  const p = ctx.project;
  const sources: EvalSources = { trunkTree: () => ctx.live.specTree(), readThreads: () => ctx.live.readThreads() };
  const bodies = new WeakMap<object, string>();

  route(app, 'read', 'GET', '/api/eval', async (c) => {
    const board = await scoreboard(p, sources);
    let body = bodies.get(board);
    if (body === undefined) bodies.set(board, (body = JSON.stringify(board)));
    return c.body(body, 200, { 'Content-Type': 'application/json; charset=utf-8' });
  });
  route(app, 'read', 'GET', '/api/eval/*', async (c) => c.json(await evalDetail(p, scenarioOf(c, ''), c.req.query('scope'), sources)));
  route(app, 'shell', 'POST', '/api/eval/*', async (c) => {
    if (c.req.path.endsWith('/run')) {
      // Runs the scenario's command in the scope's worktree and files the reading (its output kept as evidence).
      const id = scenarioOf(c, '/run');
      const b = await readJson(c, runBody, { optional: true });
      const [reading] = await runScenarios(p, { scenarios: [id], by: requestAuthor(c, p, b.by), ...(b.scope !== undefined ? { scope: b.scope } : {}) });
      return c.json(reading, 201);
    }
    const id = scenarioOf(c, '/readings');
    const b = await readJson(c, readingBody);
    const reading = await recordReading(p, id, {
      outcome: b.outcome,
      by: requestAuthor(c, p, b.by),
      ...(b.score !== undefined ? { score: b.score } : {}),
      ...(b.scope !== undefined ? { scope: b.scope } : {}),
      ...(b.evidence !== undefined ? { evidence: b.evidence } : {}),
      ...(b.durationMs !== undefined ? { durationMs: b.durationMs } : {}),
    }, sources);
    return c.json(reading, 201);
  });
  route(app, 'read', 'GET', '/api/eval-remarks/:id', async (c) => c.json(await showRemark(p, c.req.param('id'))));
  route(app, 'data', 'POST', '/api/eval-remarks/:id/reply', async (c) => {
    const b = await readJson(c, replyBody);
    return c.json(await replyToRemark(p, c.req.param('id'), { body: b.body, evidence: b.evidence ?? [], by: requestAuthor(c, p, b.by) }));
  });
  return app;
}

/** The scenario id in the path after /api/eval/, percent-decoded, with the route's `suffix` removed. */
function scenarioOf(c: Context, suffix: string): string {
  const raw = c.req.path.slice('/api/eval/'.length);
  let rest: string;
  try {
    rest = decodeURIComponent(raw);
  } catch {
    throw new TrellisError('INVALID_INPUT', `the path ${c.req.path} is not valid percent-encoding`);
  }
  if (suffix) {
    if (!rest.endsWith(suffix) || rest.length === suffix.length) throw new TrellisError('NOT_FOUND', `no route ${c.req.method} ${c.req.path}; readings are filed at POST /api/eval/<scenario>/readings, runs at POST /api/eval/<scenario>/run`);
    rest = rest.slice(0, -suffix.length);
  }
  return rest;
}
