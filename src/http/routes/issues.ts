import { Hono } from 'hono';
import { TrellisError } from '../../events/index.js';
import { closeIssueVerb } from '../../store/sessions/checks/close-fixed-issue.js';
import { actOnReply, checkReply, editIssue, reopenIssue, openIssue, promoteIssue, remarkOnIssue, replyToIssue, showIssue, writableStores } from '../../store/issues/verbs.js';
import { mergedIssues } from '../../store/issues/merged-list.js';
import { issueTimeline } from '../../store/issues/timeline.js';
import { bodySchema, readJson } from '../body.js';
import type { AppContext } from '../context.js';
import { route } from '../route-table.js';
import { requestAuthor } from '../author.js';

// Undeclared keys are refused, so a misspelt field is an error rather than silently ignored.
const openBody = bodySchema((type) => type({ '+': 'reject', concern: 'string', 'body?': 'string', 'nodes?': 'string[]', 'store?': 'string', 'by?': 'string', 'scenario?': 'string', 'reading?': 'string', 'checks?': 'string[]' }));
const replyBody = bodySchema((type) => type({ '+': 'reject', body: 'string', 'evidence?': 'string[]', 'by?': 'string' }));
const replyCheckBody = bodySchema((type) => type({ '+': 'reject', body: 'string', 'by?': 'string' }));
const remarkBody = bodySchema((type) => type({ '+': 'reject', body: 'string', reading: 'string', 'evidence?': 'string[]', 'by?': 'string' }));
const byBody = bodySchema((type) => type({ '+': 'reject', 'by?': 'string' }));
const closeBody = bodySchema((type) => type({ '+': 'reject', 'by?': 'string', 'session?': 'string' }));
const editBody = bodySchema((type) => type({ '+': 'reject', 'concern?': 'string', 'body?': 'string', 'by?': 'string' }));
const promoteBody = bodySchema((type) => type({ '+': 'reject', 'by?': 'string', 'store?': 'string' }));

const bodies = new WeakMap<object, { stores: string; body: string }>();


/** Issue routes: thin calls of the same verbs `trellis issue ...` runs. */
export function issueRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  const p = ctx.project;

  route(app, 'read', 'GET', '/api/issues', async (c) => {
    const list = await mergedIssues(p, () => ctx.live.readThreads());
    const stores = writableStores(p);
    // The list object is reused while nothing changed; so is its JSON (11,000 issues are ~40 ms to serialize).
    let memo = bodies.get(list);
    if (!memo || memo.stores !== stores.join()) bodies.set(list, (memo = { stores: stores.join(), body: JSON.stringify({ issues: list.issues, stores, problems: list.problems, ...(list.notes.length ? { notes: list.notes } : {}) }) }));
    return c.body(memo.body, 200, { 'Content-Type': 'application/json; charset=utf-8' });
  });
  route(app, 'read', 'GET', '/api/issues/:id', async (c) => c.json(await showIssue(p, c.req.param('id'))));
  // Its own read (the Issue is the spec's table): one shape for a local thread and a forge issue.
  route(app, 'read', 'GET', '/api/issues/:id/timeline', async (c) => c.json(await issueTimeline(p, c.req.param('id'))));

  route(app, 'data', 'POST', '/api/issues', async (c) => {
    const b = await readJson(c, openBody);
    const { id, issue } = await openIssue(p, {
      concern: b.concern,
      by: requestAuthor(c, p, b.by),
      ...(b.body !== undefined ? { body: b.body } : {}),
      ...(b.nodes ? { nodes: b.nodes } : {}),
      ...(b.store ? { store: b.store } : {}),
      ...(b.scenario !== undefined ? { scenario: b.scenario } : {}),
      ...(b.checks !== undefined ? { checks: b.checks } : {}),
      ...(b.reading !== undefined ? { reading: b.reading } : {}),
    });
    // An eval remark is never an issue: the answer names the thread, for the eval surfaces.
    return c.json(b.scenario !== undefined ? { id, scenario: b.scenario, ...(b.reading !== undefined ? { reading: b.reading } : {}) } : issue, 201);
  });
  route(app, 'data', 'POST', '/api/issues/:id/reply', async (c) => {
    const b = await readJson(c, replyBody);
    return c.json(await replyToIssue(p, c.req.param('id'), { body: b.body, evidence: b.evidence ?? [], by: requestAuthor(c, p, b.by) }));
  });
  // Asked before a reply's files are uploaded: a reply that would be refused stores no evidence.
  route(app, 'data', 'POST', '/api/issues/:id/reply/check', async (c) => {
    const b = await readJson(c, replyCheckBody);
    await checkReply(p, c.req.param('id'), { body: b.body, by: requestAuthor(c, p, b.by) });
    return c.json({ accepted: true });
  });
  route(app, 'data', 'POST', '/api/issues/:id/remark', async (c) => {
    const b = await readJson(c, remarkBody);
    return c.json(await remarkOnIssue(p, c.req.param('id'), { body: b.body, reading: b.reading, evidence: b.evidence ?? [], by: requestAuthor(c, p, b.by) }));
  });
  route(app, 'data', 'POST', '/api/issues/:id/replies/:n/:action', async (c) => {
    const action = c.req.param('action');
    if (action !== 'resolve' && action !== 'unresolve' && action !== 'retract') {
      throw new TrellisError('NOT_FOUND', `no reply action '${action}': resolve, unresolve or retract`);
    }
    const n = Number(c.req.param('n'));
    const b = await readJson(c, byBody, { optional: true });
    return c.json(await actOnReply(p, c.req.param('id'), action, n, requestAuthor(c, p, b.by)));
  });
  route(app, 'data', 'POST', '/api/issues/:id/close', async (c) => {
    const b = await readJson(c, closeBody, { optional: true });
    return c.json(await closeIssueVerb(p, c.req.param('id'), requestAuthor(c, p, b.by), b.session));
  });
  route(app, 'data', 'POST', '/api/issues/:id/edit', async (c) => {
    const b = await readJson(c, editBody);
    const { issue } = await editIssue(p, c.req.param('id'), { by: requestAuthor(c, p, b.by), ...(b.concern !== undefined ? { concern: b.concern } : {}), ...(b.body !== undefined ? { body: b.body } : {}) });
    return c.json(issue);
  });
  route(app, 'data', 'POST', '/api/issues/:id/reopen', async (c) => {
    const b = await readJson(c, byBody, { optional: true });
    return c.json((await reopenIssue(p, c.req.param('id'), requestAuthor(c, p, b.by))).issue);
  });
  route(app, 'owner', 'POST', '/api/issues/:id/promote', async (c) => {
    const b = await readJson(c, promoteBody, { optional: true });
    return c.json(await promoteIssue(p, c.req.param('id'), requestAuthor(c, p, b.by), b.store));
  });
  return app;
}
