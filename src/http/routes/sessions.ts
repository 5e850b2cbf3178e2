import { Hono, type Context } from 'hono';
import { resourceInventory } from '../../store/host/resources.js';
import { checkSession } from '../../store/sessions/checks/check-session.js';
import { harnessMenu } from '../../store/sessions/agents/default-harness.js';
import { reviewBundle } from '../../store/sessions/checks/review.js';
import { defaultRuntime, type SessionRuntime } from '../../store/sessions/verbs/runtime.js';
import {
  closeSession,
  interruptSession,
  listSessions,
  mergeSession,
  promptSession,
  quarantineSession,
  requestReview,
  resumeSession,
  sessionBudget,
  showSession,
  spawnSession,
  viewSession,
} from '../../store/sessions/verbs/verbs.js';
import { signalSession } from '../../store/sessions/verbs/signal-verb.js';
import { costVerb } from '../../store/sessions/usage/cost-verb.js';
import { TrellisError } from '../../events/index.js';
import { bodySchema, readJson } from '../body.js';
import type { AppContext } from '../context.js';
import { route } from '../route-table.js';
import { doorVia, requestAuthor } from '../author.js';

// Undeclared keys are refused, so a misspelt field is an error rather than silently ignored.
const spawnBody = bodySchema((type) => type({ '+': 'reject', task: 'string', 'harness?': 'string', 'nodes?': 'string[]', 'issue?': 'string', 'by?': 'string' }));
const promptBody = bodySchema((type) => type({ '+': 'reject', body: 'string', 'by?': 'string' }));
const byBody = bodySchema((type) => type({ '+': 'reject', 'by?': 'string' }));
const mergeBody = bodySchema((type) => type({ '+': 'reject', 'by?': 'string', 'override?': 'string' }));
const overrideBody = bodySchema((type) => type({ '+': 'reject', reason: 'string', 'by?': 'string' }));
const acceptBody = bodySchema((type) => type({ '+': 'reject', reason: 'string', 'scenarios?': 'string[]', 'by?': 'string' }));
/** The session a request comes from, as the CLI run inside one says (its `$TRELLIS_SESSION`): it never approves its own work. */
const fromSession = (c: { req: { header(name: string): string | undefined } }) => c.req.header('trellis-session') || undefined;
const quarantineBody = bodySchema((type) => type({ '+': 'reject', 'by?': 'string', 'reason?': 'string' }));
const answerBody = bodySchema((type) => type({ '+': 'reject', choice: 'string', 'by?': 'string' }));


/** Session routes: thin calls of the same verbs `trellis session ...` runs; no session logic here. */
export function sessionRoutes(ctx: AppContext, rt: SessionRuntime = defaultRuntime()): Hono {
  const app = new Hono();
  const p = ctx.project;

  // What the spawn form's "project default" means on this machine, and which agents are installed.
  route(app, 'read', 'GET', '/api/harnesses', (c) => c.json(harnessMenu(p.settings().harness, rt.env)));
  route(app, 'read', 'GET', '/api/sessions', async (c) => c.json(await listSessions(p, { all: c.req.query('all') !== undefined && c.req.query('all') !== 'false' })));
  route(app, 'read', 'GET', '/api/cost', async (c) => c.json(await costVerb(p, { ...(c.req.query('by') !== undefined ? { by: c.req.query('by')! } : {}), ...(c.req.query('since') !== undefined ? { since: c.req.query('since')! } : {}) })));
  route(app, 'shell', 'POST', '/api/sessions', async (c) => {
    const b = await readJson(c, spawnBody);
    const s = await spawnSession(p, rt, {
      task: b.task,
      by: requestAuthor(c, p, b.by),
      ...(b.harness !== undefined ? { harness: b.harness } : {}),
      ...(b.nodes ? { nodes: b.nodes } : {}),
      ...(b.issue !== undefined ? { issue: b.issue } : {}),
    });
    return c.json(s, 201);
  });
  route(app, 'read', 'GET', '/api/sessions/:id', async (c) => c.json(await showSession(p, c.req.param('id'))));
  route(app, 'read', 'GET', '/api/sessions/:id/review', async (c) => c.json(await reviewBundle(p, c.req.param('id'), { trunkTree: () => ctx.live.specTree() })));
  route(app, 'shell', 'POST', '/api/sessions/:id/prompt', async (c) => {
    const b = await readJson(c, promptBody);
    const result = await promptSession(p, rt, c.req.param('id'), b.body, requestAuthor(c, p, b.by));
    // On the timeline but not in the pane: accepted, not done (spec §4.2 rule 1: only a refused append fails).
    return c.json(result, result.delivered ? 200 : 202);
  });
  route(app, 'shell', 'POST', '/api/sessions/:id/merge', async (c) => {
    const b = await readJson(c, mergeBody, { optional: true });
    // Merging over blocking checks is the owner's decision, a route (and a scope) of its own.
    if (b.override !== undefined) throw new TrellisError('INVALID_INPUT', `an override is the owner's: POST /api/sessions/${c.req.param('id')}/merge/override {reason}`);
    return c.json(await mergeSession(p, rt, c.req.param('id'), requestAuthor(c, p, b.by), undefined, fromSession(c)));
  });
  route(app, 'owner', 'POST', '/api/sessions/:id/merge/override', async (c) => {
    const b = await readJson(c, overrideBody);
    return c.json(await mergeSession(p, rt, c.req.param('id'), requestAuthor(c, p, b.by), b.reason, fromSession(c)));
  });
  route(app, 'owner', 'POST', '/api/sessions/:id/accept', async (c) => {
    const b = await readJson(c, acceptBody);
    const { acceptChecks } = await import('../../store/sessions/checks/accept-checks.js');
    return c.json(await acceptChecks(p, c.req.param('id'), { reason: b.reason, ...(b.scenarios ? { scenarios: b.scenarios } : {}), by: requestAuthor(c, p, b.by), fromSession: fromSession(c) }));
  });
  // Runs the session's checks in its worktree at its head commit: as long as the scenarios take.
  route(app, 'shell', 'POST', '/api/sessions/:id/check', async (c) => {
    const b = await readJson(c, byBody, { optional: true });
    return c.json(await checkSession(p, c.req.param('id'), requestAuthor(c, p, b.by)));
  });
  route(app, 'owner', 'POST', '/api/sessions/:id/quarantine', async (c) => {
    const b = await readJson(c, quarantineBody, { optional: true });
    return c.json(await quarantineSession(p, rt, c.req.param('id'), requestAuthor(c, p, b.by), b.reason));
  });
  // An agent's HTTP hook (Claude Code's `type: "http"`): the hook's JSON, as `trellis session signal` reads
  // it on stdin. Answers `{}` (nothing for the agent to act on); what was ignored is logged, never an error
  // inside the agent's screen. Reactions (a quarantine) are the supervisor's, on the change this makes.
  route(app, 'agent', 'POST', '/api/sessions/:id/signal/:event', async (c) => {
    const payload: unknown = await c.req.json().catch(() => null);
    const r = await signalSession(p, rt, c.req.param('id'), c.req.param('event'), payload);
    for (const line of r.ignored) console.error(`trellis: session ${c.req.param('id')}: ignored ${c.req.param('event')} signal: ${line}`);
    return c.json({});
  });
  // The dialog's options by name, as an answer reads them (the gateway's notifications offer them).
  route(app, 'read', 'GET', '/api/sessions/:id/dialog', async (c) => {
    const { readDialog } = await import('../../store/sessions/verbs/dialog-read.js');
    return c.json(await readDialog(p, rt, c.req.param('id')));
  });
  // Answers the dialog on screen by its option's name (read from the pane, selected, checked, confirmed).
  route(app, 'shell', 'POST', '/api/sessions/:id/answer', async (c) => {
    const b = await readJson(c, answerBody);
    const { answerSession } = await import('../../store/sessions/verbs/answer.js');
    return c.json(await answerSession(p, rt, c.req.param('id'), b.choice, requestAuthor(c, p, b.by), doorVia(c)));
  });
  // The transitions: each the same thin call, each with its own row (and scope) in the route table.
  const transition = (verb: (id: string, by: string) => Promise<unknown>) => async (c: Context) => {
    const b = await readJson(c, byBody, { optional: true });
    return c.json(await verb(c.req.param('id')!, requestAuthor(c, p, b.by)));
  };
  route(app, 'shell', 'POST', '/api/sessions/:id/resume', transition((id, by) => resumeSession(p, rt, id, by)));
  route(app, 'shell', 'POST', '/api/sessions/:id/interrupt', transition((id, by) => interruptSession(p, rt, id, by)));
  route(app, 'shell', 'POST', '/api/sessions/:id/review', transition((id, by) => requestReview(p, id, by)));
  route(app, 'owner', 'POST', '/api/sessions/:id/close', transition((id, by) => closeSession(p, rt, id, by)));
  route(app, 'data', 'POST', '/api/sessions/:id/view', transition((id, by) => viewSession(p, id, by)));
  route(app, 'read', 'GET', '/api/resources', async (c) => c.json(resourceInventory(ctx.instance.root, await sessionBudget(p, rt.env), p.now())));
  return app;
}
